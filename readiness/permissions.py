"""The readiness app's permission strings, named once for its pages, API and services."""

VIEW = "readiness.view_deployment"
VERIFY = "readiness.verify_deployment"
SIGN_OFF = "readiness.signoff_deployment"
