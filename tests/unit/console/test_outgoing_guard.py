"""The guard on URLs users supply (console/outgoing): every spelling of an internal
address refused, every resolved address checked, the connection pinned to the checked
address (DNS rebinding gains nothing), redirects re-checked, user info refused, and the
allowlist admitting an internal receiver on purpose. Real local servers throughout;
`socket.getaddrinfo` is replaced only to play a DNS server's answers."""

import ipaddress
import socket

import pytest
import requests
from django.core.exceptions import ImproperlyConfigured

from console.outgoing import OutgoingRefused, url_check, user_request
from console.outgoing.policy import refusal
from simulator.tls import server_tls
from tests.unit.console.outgoing_servers import Recorder

real_getaddrinfo = socket.getaddrinfo


@pytest.fixture
def loopback():
    server = Recorder("127.0.0.1")
    yield server
    server.close()


@pytest.fixture
def other_loopback():
    """A second receiver on 127.0.0.2 (Linux routes all of 127/8 to lo)."""
    server = Recorder("127.0.0.2")
    yield server
    server.close()


def dns(monkeypatch, answers: dict[str, list[list[str]]]) -> list[str]:
    """Play a DNS server: each lookup of a name takes its next answer (the last one
    repeats). Returns the names looked up, in order."""
    asked: list[str] = []

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host not in answers:
            return real_getaddrinfo(host, port, family, type, proto, flags)
        asked.append(host)
        queue = answers[host]
        addresses = queue.pop(0) if len(queue) > 1 else queue[0]
        return [
            (
                socket.AF_INET6 if ":" in a else socket.AF_INET,
                socket.SOCK_STREAM,
                6,
                "",
                (a, port, 0, 0) if ":" in a else (a, port),
            )
            for a in addresses
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


SPELLINGS = [
    "http://127.0.0.1:{port}/",
    "http://2130706433:{port}/",  # decimal
    "http://0x7f.1:{port}/",  # hex, short form
    "http://017700000001:{port}/",  # octal
    "http://0177.0.0.1:{port}/",
    "http://127.1:{port}/",  # short form
    "http://localhost:{port}/",
    "http://LocalHost:{port}/",
    "http://[::1]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",  # IPv4-mapped
    "http://[0:0:0:0:0:ffff:7f00:1]:{port}/",
    "http://[::ffff:7f00:1]:{port}/",
    "http://0.0.0.0:{port}/",  # unspecified: Linux connects it to this host
    "http://0:{port}/",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_this_host_is_refused_and_nothing_is_sent(spelling, loopback):
    url = spelling.format(port=loopback.port)
    with pytest.raises(OutgoingRefused) as refused:
        url_check(url)
    assert "OUTGOING_URL_ALLOWLIST" in str(refused.value)
    with pytest.raises(OutgoingRefused):
        user_request("POST", url, deadline=5, json={"text": "hi"})
    assert loopback.requests == []


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("169.254.169.254", "link-local"),  # cloud metadata
        ("fe80::1", "link-local"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fd00::1", "private"),
        ("fec0::1", "private"),
        ("100.64.0.1", "shared"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("240.0.0.1", "reserved"),
        ("0.1.2.3", "unspecified"),
        ("::", "unspecified"),
        ("192.0.2.10", "documentation"),
        ("2001:db8::1", "documentation"),
        ("198.18.0.1", "special-purpose"),
        ("192.0.0.8", "special-purpose"),
        ("::ffff:8.8.8.8", "IPv4-mapped"),  # mapped is never needed: use the IPv4 form
        ("::8.8.8.8", "IPv4-compatible"),
        ("64:ff9b::7f00:1", "embeds 127.0.0.1, a loopback"),  # NAT64
        ("64:ff9b::a9fe:a9fe", "embeds 169.254.169.254, a link-local"),
        ("2002:0a00:0001::1", "embeds 10.0.0.1, a private"),  # 6to4
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "embeds 10.0.0.1, a private"),  # Teredo
    ],
)
def test_internal_addresses_are_refused_with_what_they_are(address, kind):
    assert kind in str(refusal(ipaddress.ip_address(address)))
    literal = f"[{address}]" if ":" in address else address
    with pytest.raises(OutgoingRefused, match=kind):
        url_check(f"http://{literal}/latest/meta-data")


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808", "2002:808:808::1"]
)
def test_public_addresses_pass(address):
    assert refusal(ipaddress.ip_address(address)) is None
    literal = f"[{address}]" if ":" in address else address
    url_check(f"https://{literal}/hook")  # a literal: no DNS needed


def test_a_name_is_refused_if_any_of_its_addresses_is_internal(monkeypatch):
    dns(monkeypatch, {"hooks.example.test": [["93.184.216.34", "10.0.0.5"]]})
    with pytest.raises(OutgoingRefused) as refused:
        url_check("https://hooks.example.test/x")
    assert str(refused.value) == (
        "hooks.example.test resolves to 10.0.0.5, a private address; add it to "
        "OUTGOING_URL_ALLOWLIST to reach an internal receiver."
    )
    dns(monkeypatch, {"ok.example.test": [["93.184.216.34", "2606:4700::1"]]})
    url_check("https://ok.example.test/x")


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://user:pw@example.com/", "user name or password"),
        ("http://token@example.com/", "user name or password"),
        ("http://@example.com/", "user name or password"),
        ("ftp://example.com/x", "Only http:// and https://"),
        ("file:///etc/passwd", "Only http:// and https://"),
        ("gopher://127.0.0.1:6379/_INFO", "Only http:// and https://"),
        ("example.com/hook", "Only http:// and https://"),
        ("http:///path", "names no host"),
        ("http://example.com:99999/", "malformed"),
        ("http://does-not-resolve.invalid/", "does not resolve"),
    ],
)
def test_malformed_urls_are_refused_with_the_reason(url, says):
    with pytest.raises(OutgoingRefused, match=says):
        url_check(url)


def test_the_allowlist_admits_an_internal_receiver(settings, loopback):
    settings.OUTGOING_URL_ALLOWLIST = "10.0.0.0/8, 127.0.0.1/32"
    url_check(f"{loopback.url}/hook")
    answer = user_request("POST", f"{loopback.url}/hook", deadline=5, json={"a": 1})
    assert answer.status_code == 200
    assert answer.content == b"ok"
    assert loopback.requests == [("/hook", f"127.0.0.1:{loopback.port}")]
    # A list from the environment (env.list) works the same; other addresses stay out.
    settings.OUTGOING_URL_ALLOWLIST = ["127.0.0.1"]
    url_check(f"{loopback.url}/hook")
    with pytest.raises(OutgoingRefused, match=r"127\.0\.0\.2 is a loopback address"):
        url_check("http://127.0.0.2/")


def test_an_allowlisted_host_name_is_reached_by_its_name(settings, monkeypatch, loopback):
    settings.OUTGOING_URL_ALLOWLIST = "receiver.internal"
    dns(monkeypatch, {"receiver.internal": [["127.0.0.1"]]})
    url_check(f"http://receiver.internal:{loopback.port}/")
    user_request("GET", f"http://RECEIVER.internal:{loopback.port}/x", deadline=5)
    assert loopback.requests == [("/x", f"receiver.internal:{loopback.port}")]


def test_a_bad_allowlist_entry_is_named(settings):
    settings.OUTGOING_URL_ALLOWLIST = "10.0.0.0/8,not a host!"
    with pytest.raises(ImproperlyConfigured, match="'not a host!' is neither a network"):
        url_check("http://8.8.8.8/")


def test_dns_rebinding_after_the_check_reaches_nothing(settings, monkeypatch, loopback):
    """Checked at save time while public-looking (an allowlisted address here, so no
    internet is needed), then the name answers 127.0.0.1: the call is refused and the
    loopback server receives nothing."""
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.2/32"
    dns(monkeypatch, {"rebind.test": [["127.0.0.2"], ["127.0.0.1"]]})
    url = f"http://rebind.test:{loopback.port}/"
    url_check(url)
    with pytest.raises(OutgoingRefused, match=r"rebind\.test resolves to 127\.0\.0\.1"):
        user_request("POST", url, deadline=5, data=b"x")
    assert loopback.requests == []


def test_the_connection_goes_to_the_address_that_was_checked(settings, monkeypatch, other_loopback):
    """One lookup per connection, and the socket connects to what that lookup said: the
    name's next answer (127.0.0.1, where a server waits on the same port) is never
    asked for, let alone used."""
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.2/32"
    port = other_loopback.port
    rebound = Recorder("127.0.0.1", port)
    try:
        asked = dns(monkeypatch, {"rebind.test": [["127.0.0.2"], ["127.0.0.1"]]})
        answer = user_request("GET", f"http://rebind.test:{port}/pinned", deadline=5)
        assert answer.status_code == 200
        assert asked == ["rebind.test"]
        assert other_loopback.requests == [("/pinned", f"rebind.test:{port}")]
        assert rebound.requests == []
    finally:
        rebound.close()


def test_tls_still_verifies_the_name_on_the_pinned_connection(settings, monkeypatch, tmp_path):
    """The socket goes to the checked address; the certificate is still checked against
    the URL's host name (SNI and Host keep the name), so a name whose certificate does
    not match is refused."""
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.2/32"
    tls = server_tls(["secure.test"])
    server = Recorder("127.0.0.2", tls=tls.context())
    ca = tmp_path / "ca.pem"
    ca.write_bytes(tls.ca_pem)
    try:
        dns(monkeypatch, {"secure.test": [["127.0.0.2"]], "other.test": [["127.0.0.2"]]})
        answer = user_request(
            "GET", f"https://secure.test:{server.port}/x", deadline=5, verify=str(ca)
        )
        assert answer.status_code == 200
        assert server.requests == [("/x", f"secure.test:{server.port}")]
        with pytest.raises(requests.exceptions.SSLError, match=r"other\.test"):
            user_request("GET", f"https://other.test:{server.port}/x", deadline=5, verify=str(ca))
        assert len(server.requests) == 1
    finally:
        server.close()


def test_a_redirect_to_an_internal_address_is_refused(settings, loopback, other_loopback):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.2/32"
    other_loopback.status, other_loopback.location = 302, f"{loopback.url}/admin"
    with pytest.raises(OutgoingRefused, match=r"127\.0\.0\.1 is a loopback address"):
        user_request("GET", f"{other_loopback.url}/start", deadline=5, allow_redirects=True)
    assert loopback.requests == []
    # Redirects with credentials, or to another scheme, are refused before any connection.
    for location in (f"http://u:p@127.0.0.2:{other_loopback.port}/", "file:///etc/passwd"):
        other_loopback.location = location
        with pytest.raises(OutgoingRefused):
            user_request("GET", f"{other_loopback.url}/start", deadline=5, allow_redirects=True)
    # Not following (the default) answers the 302 itself.
    answer = user_request("GET", f"{other_loopback.url}/start", deadline=5)
    assert answer.status_code == 302


def test_a_redirect_within_the_allowlist_is_followed(settings, other_loopback):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.2/32"
    other_loopback.status, other_loopback.location = 302, "/final"
    with pytest.raises(requests.TooManyRedirects):  # it redirects /final too, forever
        user_request("GET", f"{other_loopback.url}/start", deadline=5, allow_redirects=True)
    assert other_loopback.requests[:2] == [
        ("/start", f"127.0.0.2:{other_loopback.port}"),
        ("/final", f"127.0.0.2:{other_loopback.port}"),
    ]


def test_the_answer_kept_is_bounded(settings, loopback):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1"
    loopback.body = b"x" * (3 * 1024 * 1024)
    answer = user_request("GET", f"{loopback.url}/big", deadline=10)
    assert len(answer.content) == 1024 * 1024
