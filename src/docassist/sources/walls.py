"""Where a web source may fetch: its origin, the hosts the operator allowed, and only the
address space the operator pointed at.

- A URL is allowed when its scheme, host and port are the source's (`--url`), when it is the
  same host upgraded from http to https, or when its host (or host:port) was named with
  `--allow-host`. Every redirect hop, sitemap child and crawled link is checked again.
- Hosts are compared normalised: IP literals in any spelling (decimal `2130706433`, hex
  `0x7f000001`, octal `0177.0.0.1`, IPv4-mapped IPv6) become their canonical form first.
- Addresses are checked as resolved when the connection is made (WalledTransport), so a name
  that resolves to loopback or a private network counts as that space. Loopback and private
  space are allowed only when the source's own URL resolves there (an intranet on 10.x is
  normal); link-local space (cloud metadata at 169.254.169.254, fe80::/10) never is.
- Credentials (the `--auth-env` header) go only to the origin.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final
from urllib.parse import urlsplit

import httpcore
import httpx

from docassist.core.documents import redact_url

MAX_REDIRECTS: Final = 5
"""Redirect hops followed per request; a loop is refused at the first repeated URL."""
MAX_SITEMAP_BYTES: Final = 10_000_000
"""A sitemap (or sitemap index) larger than this, inflated, is refused."""
DEFAULT_PORTS: Final = {"http": 80, "https": 443}
METADATA_ADDRESSES: Final = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "fd00:ec2::254", "100.100.100.200"))
"""Cloud instance-metadata services (AWS, GCP, Azure; AWS over IPv6; Alibaba): never fetched,
whatever space they sit in."""

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]
"""Host and port → the addresses a connection would try (the system's getaddrinfo)."""


class OffLimits(Exception):
    """A URL or address the source may not reach; the message says why (no secret in it)."""


class Space(StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"
    LOOPBACK = "loopback"
    FORBIDDEN = "forbidden"
    """Link-local (cloud metadata), unspecified, multicast, reserved: never fetched."""


def system_resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise OffLimits(f"{host} does not resolve ({error.strerror or error})") from error
    return [str(info[4][0]) for info in infos]


def parse_ip(host: str) -> IpAddress | None:
    """An IP literal in any spelling the resolver would accept, canonical; None for names.
    IPv4-mapped IPv6 addresses are their IPv4 address."""
    text = host.strip("[]")
    try:
        address: IpAddress = ipaddress.ip_address(text)
    except ValueError:
        try:  # inet_aton's spellings: 2130706433, 0x7f000001, 0177.0.0.1, 127.1
            address = ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def normalise_host(host: str) -> str:
    address = parse_ip(host)
    return str(address) if address is not None else host.lower().rstrip(".")


def space_of(address: IpAddress) -> Space:
    if address in METADATA_ADDRESSES or address.is_link_local or address.is_unspecified \
            or address.is_multicast:
        return Space.FORBIDDEN
    if address.is_loopback:  # before "reserved": ::1 sits in IPv6's reserved ::/8
        return Space.LOOPBACK
    if address.is_reserved:
        return Space.FORBIDDEN
    if address.is_private or address in ipaddress.ip_network("100.64.0.0/10"):
        return Space.PRIVATE
    return Space.PUBLIC


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> Origin:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS or not parts.hostname:
            raise OffLimits(f"not an http(s) URL: {redact_url(url)}")
        try:
            port = parts.port or DEFAULT_PORTS[scheme]
        except ValueError as error:
            raise OffLimits(f"bad port in {redact_url(url)}") from error
        return cls(scheme, normalise_host(parts.hostname), port)

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


def has_userinfo(url: str) -> bool:
    return "@" in urlsplit(url).netloc


def parse_allowed_host(value: str) -> tuple[str, int | None]:
    """`host` or `host:port` (`[v6]:port`) as given to --allow-host."""
    text = value.strip()
    if not text or "/" in text or "@" in text:
        raise ValueError(f"--allow-host takes a host or host:port, not {value!r}")
    parts = urlsplit(f"//{text}")
    try:
        port = parts.port
    except ValueError as error:
        raise ValueError(f"--allow-host {value!r}: bad port") from error
    if not parts.hostname:
        raise ValueError(f"--allow-host takes a host or host:port, not {value!r}")
    return normalise_host(parts.hostname), port


@dataclass(frozen=True)
class Walls:
    origin: Origin
    allowed_hosts: frozenset[tuple[str, int | None]]
    inside: frozenset[Space]
    """The non-public spaces the source's own URL resolves to (then allowed)."""
    resolve: Resolver

    @classmethod
    def for_source(cls, url: str, allow_hosts: Iterable[str] = (),
                   resolve: Resolver = system_resolve) -> Walls:
        origin = Origin.of(url)
        spaces = {space_of(address) for address in _resolved(origin.host, origin.port, resolve)}
        if Space.FORBIDDEN in spaces:
            raise OffLimits(f"{origin.host} is in link-local or reserved address space")
        return cls(origin, frozenset(parse_allowed_host(h) for h in allow_hosts),
                   frozenset(spaces - {Space.PUBLIC}), resolve)

    def check_url(self, url: str) -> Origin:
        """The URL's origin when the source may fetch it; OffLimits says why not."""
        target = Origin.of(url)
        if has_userinfo(url):
            raise OffLimits("a URL with user:password@ is not fetched")
        if self.is_origin(target) or self._host_allowed(target):
            return target
        raise OffLimits(f"off the source's origin ({target}; allowed: {self.origin}"
                        + "".join(f", {h}" + (f":{p}" if p else "")
                                  for h, p in sorted(self.allowed_hosts, key=str)) + ")")

    def is_origin(self, target: Origin) -> bool:
        """The origin itself, or its host upgraded from http to https (on 443 or its port)."""
        if target == self.origin:
            return True
        return (self.origin.scheme, target.scheme) == ("http", "https") \
            and target.host == self.origin.host and target.port in (443, self.origin.port)

    def credentials_for(self, url: str) -> bool:
        return self.is_origin(Origin.of(url))

    def _host_allowed(self, target: Origin) -> bool:
        return (target.host, target.port) in self.allowed_hosts or (
            (target.host, None) in self.allowed_hosts
            and target.port == DEFAULT_PORTS[target.scheme])

    def addresses(self, host: str, port: int) -> list[str]:
        """The addresses a connection to host:port may use, checked; OffLimits if none."""
        allowed: list[str] = []
        refused: list[str] = []
        for address in _resolved(host, port, self.resolve):
            space = space_of(address)
            if space is Space.PUBLIC or space in self.inside:
                allowed.append(str(address))
            else:
                refused.append(f"{address} ({space})")
        if not allowed:
            raise OffLimits(f"{host} resolves to {', '.join(refused)}, where this source "
                            "may not fetch")
        return allowed


def _resolved(host: str, port: int, resolve: Resolver) -> list[IpAddress]:
    literal = parse_ip(host)
    if literal is not None:
        return [literal]
    addresses = [parse_ip(found.split("%", 1)[0]) for found in resolve(host, port)]
    return [address for address in addresses if address is not None]


class _WalledBackend(httpcore.SyncBackend):
    """Connects only to checked addresses: the check and the connection use the same
    resolution, so a name cannot resolve to a public address for the check and to a private
    one for the connection."""

    def __init__(self, walls: Walls) -> None:
        self.walls = walls

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None
                    ) -> httpcore.NetworkStream:
        try:
            addresses = self.walls.addresses(host, port)
        except OffLimits as error:
            raise httpcore.ConnectError(str(error)) from error
        last: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(address, port, timeout, local_address,
                                           socket_options)
            except httpcore.ConnectError as error:
                last = error
        raise httpcore.ConnectError(str(last))


class WalledTransport(httpx.HTTPTransport):
    """httpx's transport over the walled connection backend. httpx has no public seam for
    the network backend, so its connection pool is made again with ours (httpcore's own
    `network_backend` parameter); no proxy from the environment, whose address the walls
    could not check."""

    def __init__(self, walls: Walls) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            network_backend=_WalledBackend(walls))


def is_off_limits(error: BaseException) -> str | None:
    """The walls' reason when an httpx error came from a refused address."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, OffLimits):
            return str(cause)
        cause = cause.__cause__ or cause.__context__
    return None
