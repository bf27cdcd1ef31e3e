"""The pager's permission strings, named once for its pages, API and services
(console/roles.py gives them out: viewers see, responders manage their own contact
methods and shifts, commanders configure teams, schedules, policies and windows)."""

VIEW = "pager.view_team"
OWN = "pager.manage_own_oncall"  # own contact methods, take a shift, swaps, own feed
MANAGE = "pager.manage_pager"  # teams, schedules, overrides for others, policies, windows
