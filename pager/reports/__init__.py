"""The pager reports (/pager/reports/): pages per person and per team, pages out of
hours, time to acknowledge, and escalations that reached the last step; the page, its
CSV downloads and the API's GET /api/v1/pager/reports/ read the same selectors."""
