"""The pager API's shapes, one module per part. Output serializers render what the
selectors return; input serializers check a request's shape only (whether a change is
allowed is the services' call). Addresses of contact methods are write-only."""
