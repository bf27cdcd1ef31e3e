"""The drills app's permission strings, named once for its pages, API and services."""

VIEW_DRILLS = "drills.view_drillrun"
RUN_DRILL = "drills.run_drill"
