"""What the pager hears from lower apps (connected in PagerConfig.ready())."""


def connect() -> None:
    pass
