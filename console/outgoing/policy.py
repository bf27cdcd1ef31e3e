"""Which addresses a URL a user supplied may reach, and which URLs are well formed.

Refused: loopback, link-local (cloud metadata), private (RFC 1918, unique local),
shared address space (100.64/10), reserved, multicast, unspecified, broadcast,
documentation and other special-purpose networks, IPv4-mapped and IPv4-compatible IPv6,
and NAT64, 6to4 or Teredo addresses that embed a refused IPv4 address. Every address a
name resolves to is checked, not just the first. OUTGOING_URL_ALLOWLIST (networks and
host names) lets an operator reach an internal receiver on purpose.

The categories are listed here rather than left to `ipaddress.is_global`: Python 3.11's
tables miss some (NAT64 to 127.0.0.1 and site-local IPv6 count as global there).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import SplitResult, urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.functional import Promise
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy, gettext_noop

from console.outgoing.errors import OutgoingRefused

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

SCHEMES = ("http", "https")
_HOST_NAME = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$")


def _nets(*cidrs: str) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(cidr) for cidr in cidrs)


# (networks, what a person is told the address is), tested in order.
_KINDS: tuple[tuple[tuple[IPNetwork, ...], Promise], ...] = (
    (_nets("0.0.0.0/8", "::/128"), gettext_lazy("an unspecified address")),
    (_nets("127.0.0.0/8", "::1/128"), gettext_lazy("a loopback address")),
    (_nets("169.254.0.0/16", "fe80::/10"), gettext_lazy("a link-local address")),
    (_nets("224.0.0.0/4", "ff00::/8"), gettext_lazy("a multicast address")),
    (_nets("255.255.255.255/32"), gettext_lazy("the broadcast address")),
    (
        _nets("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "fec0::/10"),
        gettext_lazy("a private address"),
    ),
    (
        _nets("100.64.0.0/10"),
        gettext_lazy("a shared address (carrier-grade NAT, RFC 6598)"),
    ),
    (
        _nets("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32", "3fff::/20"),
        gettext_lazy("a documentation address"),
    ),
    (_nets("::ffff:0:0/96"), gettext_lazy("an IPv4-mapped IPv6 address")),
    (_nets("::/96"), gettext_lazy("an IPv4-compatible IPv6 address")),
    (_nets("240.0.0.0/4"), gettext_lazy("a reserved address")),
    # Special-purpose: IETF protocol assignments, benchmarking, 6to4 relay anycast, local
    # NAT64, segment routing, ORCHIDv2 (the extra ranges requests-hardened blocks too).
    (
        _nets(
            "192.0.0.0/24",
            "198.18.0.0/15",
            "192.88.99.0/24",
            "64:ff9b:1::/48",
            "5f00::/16",
            "2001:20::/28",
            "2001::/23",
            "100::/64",
        ),
        gettext_lazy("a special-purpose address"),
    ),
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SIX_TO_FOUR = ipaddress.ip_network("2002::/16")
_TEREDO = ipaddress.ip_network("2001::/32")


def refusal(ip: IPAddress) -> Promise | None:
    """What makes `ip` unfit for a user's URL (lazy: a message's English and its
    translation both come from it), or None."""
    embedded = _embedded_ipv4(ip)
    if embedded:
        for v4 in embedded:
            if (why := refusal(v4)) is not None:
                return format_lazy(
                    gettext_lazy("an IPv6 address that embeds {address}, {kind}"),
                    address=str(v4),
                    kind=why,
                )
        if ip not in _TEREDO:
            return None  # NAT64 or 6to4 to a public address: how IPv6-only clusters go out
    for networks, kind in _KINDS:
        if any(ip in net for net in networks if net.version == ip.version):
            return kind
    if ip.is_reserved or ip.is_private or not ip.is_global:
        return gettext_lazy("a special-purpose address")
    return None


def _embedded_ipv4(ip: IPAddress) -> list[ipaddress.IPv4Address]:
    if not isinstance(ip, ipaddress.IPv6Address):
        return []
    if ip in _NAT64:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    if ip in _SIX_TO_FOUR and ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip in _TEREDO and ip.teredo is not None:
        return list(ip.teredo)
    return []


# --- the allowlist -------------------------------------------------------------------------
@dataclass(frozen=True)
class Allowlist:
    networks: tuple[IPNetwork, ...] = ()
    hosts: frozenset[str] = frozenset()

    def admits_host(self, host: str) -> bool:
        return host.lower().rstrip(".") in self.hosts

    def admits(self, ip: IPAddress) -> bool:
        return any(ip in net for net in self.networks if net.version == ip.version)


def allowlist() -> Allowlist:
    """settings.OUTGOING_URL_ALLOWLIST, read on every call (tests change it), parsed once
    per distinct value."""
    value = settings.OUTGOING_URL_ALLOWLIST
    entries = value.split(",") if isinstance(value, str) else list(value)
    return _parse(tuple(e.strip() for e in entries if e.strip()))


@lru_cache(maxsize=8)
def _parse(entries: tuple[str, ...]) -> Allowlist:
    networks: list[IPNetwork] = []
    hosts: set[str] = set()
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            continue
        except ValueError:
            pass
        host = entry.lower().rstrip(".")
        if not _HOST_NAME.match(host):
            raise ImproperlyConfigured(
                f"OUTGOING_URL_ALLOWLIST: {entry!r} is neither a network (10.0.0.0/8, "
                "fd00::/8, 10.1.2.3) nor a host name (hooks.internal.example)."
            )
        hosts.add(host)
    return Allowlist(tuple(networks), frozenset(hosts))


# --- checks --------------------------------------------------------------------------------
def check_addresses(host: str, addresses: Iterable[str], allowed: Allowlist) -> None:
    """Refuse unless every address `host` resolved to may be reached."""
    if allowed.admits_host(host):
        return
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%", 1)[0])  # fe80::1%eth0: drop the zone
        if allowed.admits(ip) or (why := refusal(ip)) is None:
            continue
        if _literal(host) == ip:
            raise OutgoingRefused(
                gettext_noop(
                    "%(address)s is %(kind)s; add it to OUTGOING_URL_ALLOWLIST to reach an "
                    "internal receiver."
                ),
                params={"address": host, "kind": why},
            )
        raise OutgoingRefused(
            gettext_noop(
                "%(host)s resolves to %(address)s, %(kind)s; add it to "
                "OUTGOING_URL_ALLOWLIST to reach an internal receiver."
            ),
            params={"host": host, "address": str(ip), "kind": why},
        )


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def check_url_form(url: str) -> SplitResult:
    """Scheme http or https, a host, a valid port and no user name or password: what can
    be said of a URL without resolving it."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise OutgoingRefused(gettext_noop("The URL is malformed (its host or port).")) from None
    if parts.scheme.lower() not in SCHEMES:
        raise OutgoingRefused(
            gettext_noop("Only http:// and https:// URLs can be called, not %(scheme)s."),
            params={"scheme": repr(parts.scheme + ":" if parts.scheme else url[:20])},
        )
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise OutgoingRefused(
            gettext_noop(
                "The URL carries a user name or password (user:password@host); remove "
                "them: credentials in a URL end up in logs and on pages."
            )
        )
    if not parts.hostname:
        raise OutgoingRefused(gettext_noop("The URL names no host."))
    if port == 0:
        raise OutgoingRefused(gettext_noop("The URL's port must be from 1 to 65535."))
    return parts


def url_check(url: str) -> None:
    """For validation when a URL is saved: its form, then every address its host
    resolves to. The connection itself is checked again when it is made (pinned to the
    address checked then), so a name that changes its answer later gains nothing."""
    parts = check_url_form(url)
    host = parts.hostname or ""
    allowed = allowlist()
    if allowed.admits_host(host):
        return
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise OutgoingRefused(
            gettext_noop("%(host)s does not resolve (%(error)s); check the host name."),
            params={"host": host, "error": getattr(exc, "strerror", None) or exc},
        ) from None
    check_addresses(host, [str(info[4][0]) for info in infos], allowed)
