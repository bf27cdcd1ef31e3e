"""The drill pages, mounted by config/urls.py under /runbooks/ (their URLs predate the
app)."""

from django.urls import path

from drills import views

app_name = "drills"
urlpatterns = [
    path("drills/", views.drill_list, name="drills"),
    path("drills/plans/<int:plan_id>/", views.drill_plan_page, name="drill-plan"),
    path("drills/plans/<int:plan_id>/start/", views.drill_plan_start, name="drill-start"),
    path("drills/runs/<int:run_id>/", views.drill_run_page, name="drill-run"),
    path("drills/runs/<int:run_id>/card/", views.drill_run_card, name="drill-card"),
    path("drills/runs/<int:run_id>/stop/", views.drill_run_stop, name="drill-stop"),
]
