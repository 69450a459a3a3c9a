//! OPET timing tests (Zhai et al.; docs/opet.md), literal microseconds.
//! U sends a TCP segment of flow 3 (a 1040-B MSDU: DATA 4464 µs) to I.
//! C hears only U, D hears only I. With OPET the RTS carries a 4-byte flow
//! label (24 B, 384 µs); the negative CTS is a CTS (304 µs); the
//! ready-to-receive frame (RTR) is a CTS plus the label (18 B, 336 µs).
//!
//! ```text
//! backward pressure:
//!  U: |DIFS|---RTS(f) 384---|                 U blocks (f, I), backoff from CW 31
//!     0   50               434
//!  I:                          |--NCTS 304--|
//!                             444          748
//!  Duration: RTS 5102 (C's NAV to 5536); NCTS 0 (D's NAV untouched)
//!
//! resume (t0: end of I's DIFS + backoff drawn from [0, 7]):
//!  I: |RTR(f) 336|                      |-ACK 304-|
//!     t0      t0+336                 t0+4820  t0+5124
//!  U:              |---- DATA(f) 4464 ----|
//!               t0+346                 t0+4810
//!  Duration: RTR 4788 (D's NAV to t0+5124); DATA 314; ACK 0
//! ```

use super::harness::{fire, station_with, timer, transmitted, us};
use super::*;

const U: u32 = 0;
const I: u32 = 1;
const C: u32 = 2;
const D: u32 = 3;

fn cfg() -> DcfConfig {
    DcfConfig {
        opet: Opet {
            enabled: true,
            ..Opet::default()
        },
        ..DcfConfig::default()
    }
}

fn station(me: u32, seed: u64) -> Dcf {
    station_with(me, cfg(), seed)
}

/// A TCP segment of flow label 3, and one of label 5.
const DF: Msdu = Msdu {
    packet: 1,
    bytes: 1040,
    label: Some(3),
    ff_run: 0,
};
const DG: Msdu = Msdu {
    packet: 2,
    bytes: 1040,
    label: Some(5),
    ff_run: 0,
};

/// U's RTS(f) to I, 50–434; returns U (waiting for the CTS, its actions
/// at 434) and the RTS.
fn rts_sent() -> (Dcf, Vec<MacAction>, Frame) {
    let mut u = station(U, 1);
    let mut out = Vec::new();
    u.handle_msdu(us(0), DF, I, &mut out);
    let (t, o) = fire(&mut u, &out, MacTimer::Access);
    assert_eq!(t, us(50));
    let rts = transmitted(&o);
    assert_eq!((rts.kind, rts.rx, rts.ext.flow), (FrameKind::Rts, I, Some(3)));
    assert_eq!((rts.bytes, rts.airtime()), (24, Duration::from_micros(384)));
    // 3 SIFS + CTS 304 + DATA 4464 + ACK 304: the CTS is not lengthened.
    assert_eq!(rts.duration, Duration::from_micros(5102));
    u.handle_medium_busy(us(50));
    let mut out = Vec::new();
    u.handle_tx_end(us(434), &mut out);
    // CTSTimeout: SIFS + CTS + slot.
    assert_eq!(timer(&out, MacTimer::Timeout).unwrap().0, us(768));
    (u, out, rts)
}

#[test]
fn negative_cts_blocks_without_a_retry_and_reserves_nothing() {
    let (mut u, u_wait, rts) = rts_sent();
    let (mut c, mut d) = (station(C, 1), station(D, 1));
    c.handle_rx(us(434), &rts, &mut Vec::new());
    assert_eq!(c.nav().end(), us(5536), "C's NAV: 434 + 5102");

    let mut i = station(I, 1);
    let mut io = Vec::new();
    i.handle_medium_busy(us(50));
    i.handle_rx(us(434), &rts, &mut io);
    // I asks whether flow 3 is congested here, with the DATA's airtime.
    assert!(io.contains(&MacAction::RtsFor {
        from: U,
        label: 3,
        t_data: Duration::from_micros(4464)
    }));
    i.refuse();
    i.handle_medium_idle(us(434), &mut io);
    let (t, o) = fire(&mut i, &io, MacTimer::Response);
    assert_eq!(t, us(444));
    let ncts = transmitted(&o);
    assert_eq!(
        (ncts.kind, ncts.rx, ncts.duration, ncts.airtime()),
        (FrameKind::Ncts, U, Duration::ZERO, Duration::from_micros(304))
    );
    assert!(i.transmitting_response());
    i.handle_tx_end(us(748), &mut Vec::new());
    assert_eq!(i.stats.ncts_sent, 1);

    // D (I's neighbour) keeps no reservation from a Duration of 0.
    d.handle_rx(us(748), &ncts, &mut Vec::new());
    assert!(!d.nav().is_set(us(749)));

    // U: the MSDU goes back, SRC and CW untouched, and a backoff is drawn.
    let mut out = Vec::new();
    u.handle_rx(us(748), &ncts, &mut out);
    assert!(out.contains(&MacAction::Blocked { msdu: DF, next_hop: I }));
    assert!(!out.iter().any(|a| matches!(a, MacAction::TxFailed { .. })));
    assert!(u.wants_msdu());
    assert_eq!((u.cw(), u.stats.ncts_received), (31, 1));
    let k = u.backoff_slots() as u64;
    assert!(k <= 31);
    // The CTS timeout was cancelled: firing it does nothing.
    let (_, o) = fire(&mut u, &u_wait, MacTimer::Timeout);
    assert!(o.is_empty(), "{o:?}");
    // Another flow's MSDU is served with the backoff drawn at 748.
    u.handle_msdu(us(748), DG, C, &mut out);
    u.handle_medium_idle(us(748), &mut out);
    let (t, o) = fire(&mut u, &out, MacTimer::Access);
    assert_eq!(t, us(748 + 50 + 20 * k));
    let rts = transmitted(&o);
    assert_eq!((rts.rx, rts.ext.flow, rts.retry), (C, Some(5), false));
}

/// I owes U a ready-to-receive frame; U holds the flow's MSDU in hand,
/// frozen in a backoff. Returns I, U, t0, the RTR and U's actions.
fn rtr_at(seed: u64) -> (Dcf, Dcf, u64, Frame, Vec<MacAction>) {
    let mut i = station(I, seed);
    let mut out = Vec::new();
    i.request_rtr(us(0), U, 3, Duration::from_micros(4464), &mut out);
    let k = i.backoff_slots() as u64;
    assert!(k <= 7, "the relay window: {k}");
    let (t, o) = fire(&mut i, &out, MacTimer::Access);
    let t0 = 50 + 20 * k;
    assert_eq!(t, us(t0));
    let rtr = transmitted(&o);
    assert_eq!(
        (rtr.kind, rtr.rx, rtr.ext.flow, rtr.bytes, rtr.airtime()),
        (FrameKind::Rtr, U, Some(3), 18, Duration::from_micros(336))
    );
    // SIFS + DATA 4464 + SIFS + ACK 304.
    assert_eq!(rtr.duration, Duration::from_micros(4788));
    assert!(!i.transmitting_response(), "an initiating frame");
    i.handle_medium_busy(us(t0));

    let mut u = station(U, seed);
    u.handle_medium_busy(us(0));
    u.handle_msdu(us(0), DF, I, &mut Vec::new());
    let mut uo = Vec::new();
    u.handle_rx(us(t0 + 336), &rtr, &mut uo);
    (i, u, t0, rtr, uo)
}

#[test]
fn ready_to_receive_resumes_with_a_three_way_handshake() {
    let (mut i, mut u, t0, rtr, uo) = rtr_at(1);
    let mut io = Vec::new();
    i.handle_tx_end(us(t0 + 336), &mut io);
    // I awaits the DATA: SIFS + 4464 + slot after its RTR.
    assert_eq!(timer(&io, MacTimer::Timeout).unwrap().0, us(t0 + 4830));
    let mut d = station(D, 1);
    d.handle_rx(us(t0 + 336), &rtr, &mut Vec::new());
    assert_eq!(d.nav().end(), us(t0 + 5124));

    assert!(uo.contains(&MacAction::WantRtrData { from: I, label: 3 }));
    let mut uo = Vec::new();
    u.answer_rtr(us(t0 + 336), &mut uo);
    let (t, o) = fire(&mut u, &uo, MacTimer::Response);
    assert_eq!(t, us(t0 + 346));
    let data = transmitted(&o);
    assert_eq!(
        (data.kind, data.rx, data.duration, data.airtime()),
        (
            FrameKind::Data,
            I,
            Duration::from_micros(314),
            Duration::from_micros(4464)
        )
    );
    assert!(u.transmitting_response());
    let mut uo = Vec::new();
    u.handle_tx_end(us(t0 + 4810), &mut uo);
    assert_eq!(timer(&uo, MacTimer::Timeout).unwrap().0, us(t0 + 5144));

    let mut io = Vec::new();
    i.handle_rx(us(t0 + 4810), &data, &mut io);
    assert!(io.contains(&MacAction::RtrAnswered { from: U, label: 3 }));
    assert!(io.contains(&MacAction::Deliver { msdu: DF, from: U }));
    let (t, o) = fire(&mut i, &io, MacTimer::Response);
    assert_eq!(t, us(t0 + 4820));
    let ack = transmitted(&o);
    assert_eq!(ack.kind, FrameKind::Ack);
    i.handle_tx_end(us(t0 + 5124), &mut Vec::new());
    assert_eq!((i.stats.rtr_sent, i.stats.rtr_answered), (1, 1));
    assert_eq!(i.pending_rtrs().count(), 0);

    let mut uo = Vec::new();
    u.handle_rx(us(t0 + 5124), &ack, &mut uo);
    assert!(uo.contains(&MacAction::TxDone { msdu: DF, next_hop: I }));
}

/// The RTR is lost: I times out at t0 + 4830 and sends it again after a
/// backoff of k slots drawn from [0, 15] at the timeout (counted from
/// then, as after any timeout, §9.3.2.6); the second loss gives the resume up.
///
/// ```text
///  I: |RTR 336|------ wait 4494 ------|k slots|RTR 336|------ wait 4494 ------|  RtrAbandoned
///     t0   t0+336                  t0+4830   r=t0+4830+20k r+336            r+4830
/// ```
#[test]
fn lost_ready_to_receive_is_retried_once_then_given_up() {
    let (mut i, _u, t0, _rtr, _uo) = rtr_at(2);
    let mut io = Vec::new();
    i.handle_tx_end(us(t0 + 336), &mut io);
    i.handle_medium_idle(us(t0 + 336), &mut io);
    let (t, o) = fire(&mut i, &io, MacTimer::Timeout);
    assert_eq!(t, us(t0 + 4830));
    assert!(!o.iter().any(|a| matches!(a, MacAction::RtrAbandoned { .. })));
    let k = i.backoff_slots() as u64;
    assert!(k <= 15);
    assert_eq!(i.stats.rtr_timeouts, 1);
    let (t, o) = fire(&mut i, &o, MacTimer::Access);
    let r = t0 + 4830 + 20 * k;
    assert_eq!(t, us(r));
    let again = transmitted(&o);
    assert_eq!((again.kind, again.rx), (FrameKind::Rtr, U));
    i.handle_medium_busy(t);
    let mut io = Vec::new();
    i.handle_tx_end(us(r + 336), &mut io);
    i.handle_medium_idle(us(r + 336), &mut io);
    let (t, o) = fire(&mut i, &io, MacTimer::Timeout);
    assert_eq!(t, us(r + 4830));
    assert!(o.contains(&MacAction::RtrAbandoned { to: U, label: 3 }));
    assert_eq!((i.stats.rtr_sent, i.stats.rtr_abandoned), (2, 1));
    assert_eq!(i.pending_rtrs().count(), 0);
}

/// U does not answer an RTR under another exchange's NAV.
#[test]
fn ready_to_receive_is_not_answered_under_a_nav() {
    let mut u = station(U, 1);
    let rts = Frame::control(FrameKind::Rts, C, D, Duration::from_micros(5000), Rate::MBPS_1);
    u.handle_rx(us(0), &rts, &mut Vec::new());
    let mut rtr = Frame::control(FrameKind::Rtr, I, U, Duration::from_micros(4788), Rate::MBPS_1);
    rtr.ext.flow = Some(3);
    let mut o = Vec::new();
    u.handle_rx(us(1000), &rtr, &mut o);
    assert!(!o.iter().any(|a| matches!(a, MacAction::WantRtrData { .. })));
    assert_eq!(u.stats.rtr_received, 1);
}

/// Fast relay: I decodes a DATA to forward at T = 5000 and ACKs it
/// (5010–5314); its next access draws from [0, 7] instead of what was left
/// of its own backoff.
///
/// ```text
///  I: ...DATA rx|SIFS|-ACK 304-|DIFS|k ≤ 7 slots|RTS(f)
///            5000  5010      5314  5364       5364 + 20k
/// ```
#[test]
fn fast_relay_shortens_the_next_backoff() {
    // I holds an MSDU of its own with a long frozen backoff.
    let (mut i, own) = (1..200)
        .find_map(|seed| {
            let mut m = station(I, seed);
            m.handle_medium_busy(us(0));
            m.handle_msdu(us(0), DG, D, &mut Vec::new());
            let k = m.backoff_slots();
            (k > 7).then_some((m, k))
        })
        .unwrap();
    let data = Frame {
        kind: FrameKind::Data,
        tx: U,
        rx: I,
        duration: Duration::from_micros(314),
        seq: 0,
        retry: false,
        msdu: Some(DF),
        bytes: 1068,
        rate: Rate::MBPS_2,
        ext: Extensions::default(),
    };
    let mut io = Vec::new();
    i.handle_rx(us(5000), &data, &mut io);
    assert!(io.contains(&MacAction::Deliver { msdu: DF, from: U }));
    i.prioritize(us(5000), &mut io);
    let k = i.backoff_slots() as u64;
    assert!(k <= 7 && (k as u32) < own, "{k} of {own}");
    let (t, o) = fire(&mut i, &io, MacTimer::Response);
    assert_eq!((t, transmitted(&o).kind), (us(5010), FrameKind::Ack));
    i.handle_medium_busy(us(5010));
    let mut io = Vec::new();
    i.handle_tx_end(us(5314), &mut io);
    i.handle_medium_idle(us(5314), &mut io);
    let (t, o) = fire(&mut i, &io, MacTimer::Access);
    assert_eq!(t, us(5364 + 20 * k));
    assert_eq!(transmitted(&o).kind, FrameKind::Rts);
}

/// Fast relay while counting down: slots already counted stay counted, and
/// no more than U[0, 7] remain.
#[test]
fn fast_relay_while_counting_keeps_the_elapsed_slots() {
    let (mut i, own) = (1..200)
        .find_map(|seed| {
            let mut m = station(I, seed);
            m.handle_medium_busy(us(0));
            m.handle_msdu(us(0), DG, D, &mut Vec::new());
            let k = m.backoff_slots();
            (k > 12).then_some((m, k))
        })
        .unwrap();
    let mut out = Vec::new();
    i.handle_medium_idle(us(0), &mut out);
    // Three slots counted by 50 + 65 µs.
    i.prioritize(us(115), &mut out);
    let left = i.backoff_slots() as u64 - 3;
    assert!(left <= 7 && (left as u32) < own - 3);
    let (t, _) = fire(&mut i, &out, MacTimer::Access);
    assert_eq!(t, us(50 + 20 * (3 + left)));
}
