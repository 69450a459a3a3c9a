"""Bianchi's saturation throughput model of the 802.11 DCF.

G. Bianchi, "Performance Analysis of the IEEE 802.11 Distributed Coordination
Function", IEEE JSAC 18(3), 2000. Every one of n stations always has a frame to
send; each transmits in a slot with probability tau, and a transmission collides
with probability p. The two are tied by (Bianchi eq. 7 and 9):

    tau = 2 (1 - 2p) / ((1 - 2p)(W + 1) + p W (1 - (2p)^m))
    p   = 1 - (1 - tau)^(n - 1)

and the saturation throughput (eq. 13) is

    S = Ps Ptr E[P] / ((1 - Ptr) sigma + Ptr Ps Ts + Ptr (1 - Ps) Tc)

with Ptr = 1 - (1 - tau)^n and Ps = n tau (1 - tau)^(n - 1) / Ptr. The durations
Ts (a successful exchange) and Tc (a collision) are built in `exchange_times`;
docs/experiments.md gives the formulas and why Tc ends with EIFS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Bytes added below the application payload of one UDP datagram.
UDP_HEADER_BYTES = 8
IP_HEADER_BYTES = 20
MAC_DATA_OVERHEAD_BYTES = 28  # 24-byte MAC header + 4-byte FCS
RTS_BYTES = 20
CTS_BYTES = 14
ACK_BYTES = 14


@dataclass(frozen=True)
class DcfParams:
    """802.11b DSSS timing (IEEE 802.11-1999 §15) and the DCF backoff window."""

    data_rate_mbps: float = 2.0
    basic_rate_mbps: float = 1.0
    slot_us: float = 20.0
    sifs_us: float = 10.0
    difs_us: float = 50.0
    plcp_us: float = 192.0  # long preamble (144 bits) + PLCP header (48 bits) at 1 Mbit/s
    prop_delay_us: float = 1.0
    cw_min: int = 31  # W = cw_min + 1 = 32
    backoff_stages: int = 5  # m: CWmax + 1 = W * 2^m = 1024
    # "eifs": the stations that saw the collided frame defer EIFS before counting down
    # again (what a DCF that implements EIFS does); "difs": Bianchi's original DIFS.
    collision_wait: str = "eifs"

    @property
    def eifs_us(self) -> float:
        """EIFS = SIFS + ACK airtime at the basic rate + DIFS (802.11-1999 §9.2.10)."""
        return self.sifs_us + self.control_us(ACK_BYTES) + self.difs_us

    def control_us(self, nbytes: int) -> float:
        """Airtime of a control frame: PLCP preamble and header, then the frame at the basic rate."""
        return self.plcp_us + nbytes * 8 / self.basic_rate_mbps

    def data_us(self, mpdu_bytes: int) -> float:
        """Airtime of a data frame: PLCP preamble and header, then the MPDU at the data rate."""
        return self.plcp_us + mpdu_bytes * 8 / self.data_rate_mbps


def exchange_times(params: DcfParams, mpdu_bytes: int, rts_cts: bool) -> tuple[float, float]:
    """(Ts, Tc) in microseconds for one successful exchange and one collision.

    Basic access (Bianchi §IV-B): Ts = DATA + SIFS + d + ACK + DIFS + d, and a
    collision occupies the channel for the data frame and then the wait that follows it.
    RTS/CTS: Ts = RTS + SIFS + d + CTS + SIFS + d + DATA + SIFS + d + ACK + DIFS + d,
    and only RTS frames collide, so Tc = RTS + wait + d.
    """
    if params.collision_wait not in ("eifs", "difs"):
        raise ValueError(f"collision_wait must be 'eifs' or 'difs', not {params.collision_wait!r}")
    d = params.prop_delay_us
    wait = params.eifs_us if params.collision_wait == "eifs" else params.difs_us
    data = params.data_us(mpdu_bytes)
    ack = params.control_us(ACK_BYTES)
    if rts_cts:
        rts = params.control_us(RTS_BYTES)
        cts = params.control_us(CTS_BYTES)
        ts = rts + params.sifs_us + d + cts + params.sifs_us + d + data
        ts += params.sifs_us + d + ack + params.difs_us + d
        tc = rts + wait + d
    else:
        ts = data + params.sifs_us + d + ack + params.difs_us + d
        tc = data + wait + d
    return ts, tc


def transmit_probability(p: float, params: DcfParams) -> float:
    """tau(p), Bianchi eq. 7, written as a finite sum so that p = 1/2 is not a 0/0."""
    w = params.cw_min + 1
    geometric = sum((2 * p) ** i for i in range(params.backoff_stages))
    return 2.0 / (1.0 + w + p * w * geometric)


def solve_fixed_point(n: int, params: DcfParams) -> tuple[float, float]:
    """(tau, p) for n saturated stations, by bisection on p.

    p - (1 - (1 - tau(p))^(n-1)) rises monotonically from <= 0 at p = 0 to > 0 at
    p = 1, so the root is unique.
    """
    if n < 1:
        raise ValueError(f"the number of stations must be at least 1, not {n}")
    if n == 1:
        return transmit_probability(0.0, params), 0.0
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        tau = transmit_probability(mid, params)
        if mid - (1 - (1 - tau) ** (n - 1)) > 0:
            hi = mid
        else:
            lo = mid
    p = (lo + hi) / 2
    return transmit_probability(p, params), p


def saturation_throughput_kbps(
    n: int,
    payload_bytes: int,
    rts_cts: bool,
    params: DcfParams = DcfParams(),
    header_bytes: int = UDP_HEADER_BYTES + IP_HEADER_BYTES,
) -> float:
    """Aggregate application-payload throughput of n saturated stations, in kbit/s."""
    tau, _ = solve_fixed_point(n, params)
    mpdu = payload_bytes + header_bytes + MAC_DATA_OVERHEAD_BYTES
    ts, tc = exchange_times(params, mpdu, rts_cts)
    p_tr = 1 - (1 - tau) ** n
    p_s = n * tau * (1 - tau) ** (n - 1) / p_tr
    mean_slot_us = (1 - p_tr) * params.slot_us + p_tr * p_s * ts + p_tr * (1 - p_s) * tc
    bits = payload_bytes * 8
    return p_s * p_tr * bits / mean_slot_us * 1000.0  # bits per µs = Mbit/s; ×1000 → kbit/s


def saturation_kbps_for_scenario(scenario: Mapping[str, Any]) -> float:
    """The model's prediction for a single-hop scenario of saturated UDP senders.

    n is the number of distinct flow sources; payload, rates and the RTS threshold
    come from the scenario (defaults as in the scenario file reference).
    """
    flows = scenario.get("flow", [])
    if not flows:
        raise ValueError("the Bianchi model needs at least one [[flow]]")
    if any(f.get("transport") != "udp" for f in flows):
        raise ValueError("the Bianchi model applies to UDP flows only")
    payloads = {int(f.get("packet_bytes", 1000)) for f in flows}
    if len(payloads) != 1:
        raise ValueError("the Bianchi model needs one payload size for every flow")
    payload = payloads.pop()
    n = len({f["src"] for f in flows})
    radio = scenario.get("radio", {})
    mac = scenario.get("mac", {})
    params = DcfParams(
        data_rate_mbps=float(radio.get("data_rate_mbps", 2.0)),
        basic_rate_mbps=float(radio.get("basic_rate_mbps", 1.0)),
    )
    mpdu = payload + UDP_HEADER_BYTES + IP_HEADER_BYTES + MAC_DATA_OVERHEAD_BYTES
    rts_cts = mpdu > int(mac.get("rts_threshold_bytes", 0))
    return saturation_throughput_kbps(n, payload, rts_cts, params)
