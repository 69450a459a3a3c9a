//! ns-2.35's MAC rules (`[ns2]`, docs/models.md), each against the
//! standard's behaviour on the same µs timeline (802.11b, 2 Mbit/s data,
//! 1 Mbit/s control, long preamble), with A's RTS to B of `tests.rs`:
//!
//! ```text
//!  A: |DIFS|--RTS 352--|
//!     0   50          402  SIFS  412
//!  B:                        |-CTS 304-|   (standard; under ns-2 only if B is idle at 412)
//!                           412       716
//! ```

use super::harness::{fire, on_air, station_with, timer, us};
use super::tests::{msdu, rts_a_to_b};
use super::*;
use crate::mac::frame::NS2_DATA_OVERHEAD_BYTES;

const A: u32 = 0;
const B: u32 = 1;

/// The standard DCF, and the same with ns-2's MAC rules.
fn configs() -> [(bool, DcfConfig); 2] {
    let ns2 = DcfConfig {
        cts_if_idle: true,
        capture_nav: true,
        eifs_nav: true,
        data_overhead_bytes: NS2_DATA_OVERHEAD_BYTES,
        ..DcfConfig::default()
    };
    [(false, DcfConfig::default()), (true, ns2)]
}

/// What B puts on the air SIFS after the RTS, if anything.
fn answer_at_sifs(b: &mut Dcf, rx: &[MacAction]) -> Option<Frame> {
    timer(rx, MacTimer::Response)?;
    let (t, o) = fire(b, rx, MacTimer::Response);
    assert_eq!(t, us(412));
    on_air(&o)
}

/// A weaker frame of 1000 µs starts at 200 µs, during the RTS, and is
/// captured out. ns-2 (`capture` :555) sets B's NAV to EIFS + 1000 µs,
/// to 1564 µs, so B, not idle at 412 µs, sends no CTS; the standard sets
/// nothing and B answers.
///
/// ```text
///  A:  |--RTS 352--|
///      50         402
///  X:        |------ weaker frame 1000, captured out ------|
///           200                                          1200
///  B:  NAV (ns-2) ...........................................|EIFS| 1564
/// ```
#[test]
fn an_rts_heard_over_a_captured_frame_gets_no_cts_under_ns2() {
    for (ns2, cfg) in configs() {
        let mut b = station_with(B, cfg, 1);
        b.handle_medium_busy(us(50));
        b.captured(us(200), Duration::from_micros(1000));
        let mut out = Vec::new();
        b.handle_rx(us(402), &rts_a_to_b(), &mut out);
        let cts = answer_at_sifs(&mut b, &out);
        if ns2 {
            assert_eq!(b.nav().end(), us(1564));
            assert!(cts.is_none(), "ns-2's addressee is not idle: {cts:?}");
        } else {
            assert_eq!(cts.map(|f| (f.kind, f.rx)), Some((FrameKind::Cts, A)));
        }
    }
}

/// A frame starts at 405 µs, after the RTS ended at 402 µs: at 412 µs B's
/// medium is busy. The standard sends the CTS whatever the medium says
/// (§9.3.2.6); ns-2 (`check_pktCTRL` :941, `is_idle`) drops it.
#[test]
fn a_busy_medium_at_sifs_drops_the_cts_under_ns2() {
    for (ns2, cfg) in configs() {
        let mut b = station_with(B, cfg, 1);
        b.handle_medium_busy(us(50));
        let mut out = Vec::new();
        b.handle_rx(us(402), &rts_a_to_b(), &mut out);
        b.handle_medium_idle(us(402), &mut out);
        b.handle_medium_busy(us(405));
        let cts = answer_at_sifs(&mut b, &out);
        assert_eq!(cts.is_none(), ns2, "{cts:?}");
        assert!(b.idle() || !ns2, "B is back to contention");
    }
}

/// ns-2's EIFS is a NAV from the end of the erroneous frame (`recv_timer`
/// `set_nav`), which DIFS follows (`navHandler` :781): an MSDU waits
/// EIFS + DIFS = 414 µs after the error (and, finding the NAV set, a
/// backoff), against the standard's 364 µs, and an RTS inside that EIFS is
/// not answered.
///
/// ```text
///  B: |-- frame in error --|      EIFS 364      |DIFS|
///     0                   300                  664  714
/// ```
#[test]
fn eifs_is_a_nav_followed_by_difs_under_ns2() {
    for (ns2, cfg) in configs() {
        let mut b = station_with(B, cfg, 4);
        let mut out = Vec::new();
        b.handle_medium_busy(us(0));
        b.handle_rx_error(us(300));
        b.handle_medium_idle(us(300), &mut out);
        let mut out = Vec::new();
        b.handle_msdu(us(310), msdu(), A, &mut out);
        // Under ns-2's NAV the MSDU finds the medium busy and backs off k slots.
        let k = b.backoff_slots() as u64;
        let at = timer(&out, MacTimer::Access).unwrap().0;
        assert_eq!(at, if ns2 { us(714 + 20 * k) } else { us(664) });
        let mut out = Vec::new();
        let rts = Frame { tx: 2, ..rts_a_to_b() };
        b.handle_medium_busy(us(300));
        b.handle_rx(us(652), &rts, &mut out);
        assert_eq!(timer(&out, MacTimer::Response).is_none(), ns2);
    }
}

/// ns-2's data frame carries a fourth address: 34 bytes of header and FCS,
/// so a 1028-byte MSDU takes 4440 µs at 2 Mbit/s instead of 4416 µs.
#[test]
fn the_four_address_header_lengthens_data_frames_under_ns2() {
    for (ns2, cfg) in configs() {
        let cfg = DcfConfig {
            rts_threshold_bytes: 3000,
            ..cfg
        };
        let mut a = station_with(A, cfg, 1);
        let mut out = Vec::new();
        a.handle_msdu(us(0), msdu(), B, &mut out);
        let (_, o) = fire(&mut a, &out, MacTimer::Access);
        let data = on_air(&o).unwrap();
        assert_eq!(data.bytes, if ns2 { 1062 } else { 1056 });
        let airtime = if ns2 { 4440 } else { 4416 };
        assert_eq!(data.airtime(), Duration::from_micros(airtime));
    }
}
