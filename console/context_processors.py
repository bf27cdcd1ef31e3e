from django.conf import settings

from console.roles import user_roles


def console(request):
    user = getattr(request, "user", None)
    return {
        "user_roles": user_roles(user) if user is not None else [],
        "live_refresh_seconds": settings.LIVE_REFRESH_SECONDS,
    }
