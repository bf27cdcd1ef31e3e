"""Chat-ops permission strings, named once for its pages, admin and services.

Any console role reads the chat pages (the installations, identities, interactions and
threads hold nothing secret). Sending a failed chat post again is the same right as
sending a failed notification again (commanders and admins); the set-up is the admin's
(Django's model permissions on the chat models, given to the admin role in
console/roles.py).
"""

RETRY = "notifications.retry_delivery"  # "Send again" on a failed chat post
CONFIGURE = "chatops.change_workspace"  # installations and their team channels
LINK = "chatops.change_chatidentity"  # link a chat user to a console user
