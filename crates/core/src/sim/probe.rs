//! Observations for invariant tests: every transmission start and every
//! successful reception, recorded only when enabled
//! (`Simulator::enable_probe`), and the two radio-level invariants read
//! from them, which the unit and the scenario tests alike check.

use crate::mac::FrameKind;
use crate::time::SimTime;

/// Every transmission and reception of a run, for the invariant tests (`Simulator::enable_probe`).
#[derive(Clone, Debug, Default)]
pub struct Probe {
    /// Each frame put on the air, in time order.
    pub transmissions: Vec<TxRecord>,
    /// Each frame received whole, in time order of its end.
    pub receptions: Vec<RxRecord>,
}

/// A frame put on the air.
#[derive(Clone, Copy, Debug)]
pub struct TxRecord {
    /// The transmitter.
    pub node: u32,
    /// When its first bit left.
    pub at: SimTime,
    /// RTS, CTS, DATA, ACK, ...
    pub kind: FrameKind,
    /// The transmitter's NAV was set when the frame started.
    pub nav_set: bool,
    /// The MAC sent it as a response (CTS, ACK, DATA after a CTS), which
    /// goes whatever the NAV says.
    pub response: bool,
}

/// A frame received whole.
#[derive(Clone, Copy, Debug)]
pub struct RxRecord {
    /// The receiver.
    pub node: u32,
    /// When its first bit arrived.
    pub start: SimTime,
    /// When its last bit arrived.
    pub end: SimTime,
}

impl Probe {
    /// The first two successful receptions at one radio that overlap in
    /// time (a half-duplex radio locks onto one signal at a time), by node
    /// and start; none in a correct run.
    pub fn overlapping_receptions(&self) -> Option<[RxRecord; 2]> {
        let mut rx = self.receptions.clone();
        rx.sort_by_key(|r| (r.node, r.start));
        rx.windows(2)
            .find(|w| w[0].node == w[1].node && w[1].start < w[0].end)
            .map(|w| [w[0], w[1]])
    }

    /// Frames started while the transmitter's NAV was set, other than
    /// responses, which go SIFS after the frame that asked for them whatever
    /// the NAV says; none in a correct run.
    pub fn nav_violations(&self) -> impl Iterator<Item = &TxRecord> {
        self.transmissions.iter().filter(|t| t.nav_set && !t.response)
    }

    /// Both invariants at once, for the tests that check a finished run:
    /// what the first broken one found, or `None`.
    pub fn air_violation(&self) -> Option<String> {
        if let Some(pair) = self.overlapping_receptions() {
            return Some(format!("overlapping receptions: {pair:?}"));
        }
        let against_nav: Vec<_> = self.nav_violations().collect();
        (!against_nav.is_empty()).then(|| format!("frames started against a set NAV: {against_nav:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(node: u32, start_us: u64, end_us: u64) -> RxRecord {
        RxRecord {
            node,
            start: SimTime(start_us * 1000),
            end: SimTime(end_us * 1000),
        }
    }

    fn tx(nav_set: bool, response: bool) -> TxRecord {
        TxRecord {
            node: 0,
            at: SimTime::ZERO,
            kind: FrameKind::Data,
            nav_set,
            response,
        }
    }

    #[test]
    fn receptions_back_to_back_or_at_other_nodes_do_not_overlap() {
        let p = Probe {
            transmissions: vec![],
            receptions: vec![rx(1, 100, 200), rx(2, 150, 250), rx(1, 200, 300)],
        };
        assert!(p.overlapping_receptions().is_none());
    }

    #[test]
    fn two_receptions_at_one_node_overlapping_are_found_in_any_order() {
        let p = Probe {
            transmissions: vec![],
            receptions: vec![rx(1, 250, 400), rx(2, 0, 1000), rx(1, 100, 300)],
        };
        let [a, b] = p.overlapping_receptions().expect("overlap");
        assert_eq!(
            (a.node, a.start, b.start),
            (1, SimTime(100 * 1000), SimTime(250 * 1000))
        );
    }

    #[test]
    fn only_an_initiation_against_a_set_nav_is_a_violation() {
        let p = Probe {
            transmissions: vec![tx(false, false), tx(true, true), tx(false, true), tx(true, false)],
            receptions: vec![],
        };
        let v: Vec<_> = p.nav_violations().collect();
        assert_eq!(v.len(), 1);
        assert!(v[0].nav_set && !v[0].response);
        assert!(p
            .air_violation()
            .is_some_and(|m| m.starts_with("frames started against a set NAV")));
    }

    #[test]
    fn a_run_without_violations_reports_none_and_an_overlap_comes_first() {
        let clean = Probe {
            transmissions: vec![tx(false, false), tx(true, true)],
            receptions: vec![rx(1, 100, 200), rx(1, 200, 300)],
        };
        assert_eq!(clean.air_violation(), None);
        let both = Probe {
            transmissions: vec![tx(true, false)],
            receptions: vec![rx(1, 100, 300), rx(1, 200, 400)],
        };
        assert!(both
            .air_violation()
            .is_some_and(|m| m.starts_with("overlapping receptions")));
    }
}
