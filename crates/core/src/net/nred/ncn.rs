//! Neighborhood Congestion Notification (Xu et al. §5.2): Algorithm 5.1,
//! the four conditions a notification must pass, and the receiver's store
//! of the largest normalizedP_b heard.

use crate::time::{Duration, SimTime};

/// Algorithm 5.1: p_b and normalizedP_b = p_b / avg from the estimated
/// average neighborhood queue. Below min_th both are 0; at or above max_th
/// both are 1.
pub fn calculate_pb(avg: f64, min_th: f64, max_th: f64, max_p: f64) -> (f64, f64) {
    if avg >= max_th {
        (1.0, 1.0)
    } else if avg >= min_th {
        let pb = max_p * (avg - min_th) / (max_th - min_th);
        // avg >= min_th; a zero min_th with zero avg gives no drop.
        let norm = if avg > 0.0 { pb / avg } else { 0.0 };
        (pb, norm)
    } else {
        (0.0, 0.0)
    }
}

/// Why a node did not send a notification (the §5.2 condition that failed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// (i) p_b is 0: no early congestion.
    NoCongestion,
    /// (ii) no flow goes through this node.
    NotOnPath,
    /// (iii) avg_tx + avg_rx is not below the suffering threshold.
    NotSuffering,
    /// (iv) a notification with a larger normalizedP_b was heard in the
    /// last T_NCN.
    LargerHeard,
}

impl Blocked {
    /// Every condition, in the summary's order.
    pub const ALL: [Blocked; 4] = [
        Blocked::NoCongestion,
        Blocked::NotOnPath,
        Blocked::NotSuffering,
        Blocked::LargerHeard,
    ];
    /// The condition's key in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Blocked::NoCongestion => "no_congestion",
            Blocked::NotOnPath => "not_on_path",
            Blocked::NotSuffering => "not_suffering",
            Blocked::LargerHeard => "larger_heard",
        }
    }
}

/// The inputs of the §5.2 decision at one T_NCN tick.
#[derive(Clone, Copy, Debug)]
pub struct NcnInputs {
    /// p_b from the average (RED's formula over avg).
    pub pb: f64,
    /// normalizedP_b: p_b over max_p.
    pub normalized_pb: f64,
    /// Whether this node forwards or sources flow packets.
    pub on_path: bool,
    /// avg_tx + avg_rx.
    pub own_share: f64,
    /// The share of the neighborhood this node must carry to notify.
    pub suffer_th: f64,
    /// Largest normalizedP_b heard from others during the last T_NCN.
    pub heard_max: f64,
}

/// Conditions (i)-(iv), checked in the paper's order; Ok means broadcast.
pub fn may_notify(x: &NcnInputs) -> Result<(), Blocked> {
    if x.pb <= 0.0 {
        return Err(Blocked::NoCongestion);
    }
    if !x.on_path {
        return Err(Blocked::NotOnPath);
    }
    if x.own_share >= x.suffer_th {
        return Err(Blocked::NotSuffering);
    }
    if x.heard_max > x.normalized_pb {
        return Err(Blocked::LargerHeard);
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Stored {
    from: u32,
    normalized_pb: f64,
    expires: SimTime,
}

/// What a node keeps of the notifications it hears (§5.2, last paragraphs):
/// one entry, the largest normalizedP_b; a newer notification from the
/// stored sender replaces it whatever its value; it lapses after its
/// lifetime. Also remembers recent notifications for condition (iv).
#[derive(Clone, Debug, Default)]
pub struct NcnStore {
    stored: Option<Stored>,
    recent: Vec<(SimTime, f64)>,
}

impl NcnStore {
    /// A notification arrived from `from`.
    pub fn handle_ncn(&mut self, now: SimTime, from: u32, normalized_pb: f64, lifetime: Duration) {
        let new = Stored {
            from,
            normalized_pb,
            expires: now + lifetime,
        };
        self.stored = match self.stored {
            Some(s) if s.expires > now && s.from != from && s.normalized_pb >= normalized_pb => Some(s),
            _ => Some(new),
        };
        self.recent.push((now, normalized_pb));
    }

    /// The normalizedP_b in force at `now` (0 once the lifetime has passed).
    pub fn current(&self, now: SimTime) -> f64 {
        match self.stored {
            Some(s) if s.expires > now => s.normalized_pb,
            _ => 0.0,
        }
    }

    /// The sender of the stored notification, while it is in force.
    pub fn current_sender(&self, now: SimTime) -> Option<u32> {
        self.stored.filter(|s| s.expires > now).map(|s| s.from)
    }

    /// Largest normalizedP_b heard in (now − window, now]; forgets older ones.
    pub fn heard_max(&mut self, now: SimTime, window: Duration) -> f64 {
        self.recent.retain(|&(t, _)| t + window > now);
        self.recent.iter().map(|&(_, p)| p).fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> SimTime {
        SimTime::from_secs_f64(x)
    }

    #[test]
    fn algorithm_5_1_at_below_and_above_thresholds() {
        let (min, max, mp) = (100.0, 240.0, 0.14);
        assert_eq!(calculate_pb(99.9, min, max, mp), (0.0, 0.0));
        // At min_th: p_b = 0 (and condition (i) will block).
        assert_eq!(calculate_pb(100.0, min, max, mp), (0.0, 0.0));
        let (pb, n) = calculate_pb(170.0, min, max, mp);
        assert!((pb - 0.07).abs() < 1e-12);
        assert!((n - 0.07 / 170.0).abs() < 1e-15);
        let (pb, n) = calculate_pb(239.99, min, max, mp);
        assert!(pb < 0.14 && pb > 0.1399);
        assert!((n - pb / 239.99).abs() < 1e-15);
        assert_eq!(calculate_pb(240.0, min, max, mp), (1.0, 1.0));
        assert_eq!(calculate_pb(300.0, min, max, mp), (1.0, 1.0));
    }

    fn passing() -> NcnInputs {
        NcnInputs {
            pb: 0.05,
            normalized_pb: 0.05 / 150.0,
            on_path: true,
            own_share: 10.0,
            suffer_th: 50.0,
            heard_max: 0.0,
        }
    }

    #[test]
    fn all_four_conditions_pass() {
        assert_eq!(may_notify(&passing()), Ok(()));
        // Hearing a smaller or equal notification does not block.
        let x = NcnInputs {
            heard_max: 0.05 / 150.0,
            ..passing()
        };
        assert_eq!(may_notify(&x), Ok(()));
    }

    #[test]
    fn each_condition_blocks_alone() {
        let x = NcnInputs {
            pb: 0.0,
            normalized_pb: 0.0,
            ..passing()
        };
        assert_eq!(may_notify(&x), Err(Blocked::NoCongestion));
        let x = NcnInputs {
            on_path: false,
            ..passing()
        };
        assert_eq!(may_notify(&x), Err(Blocked::NotOnPath));
        let x = NcnInputs {
            own_share: 50.0,
            ..passing()
        };
        assert_eq!(may_notify(&x), Err(Blocked::NotSuffering));
        let x = NcnInputs {
            heard_max: 0.001,
            ..passing()
        };
        assert_eq!(may_notify(&x), Err(Blocked::LargerHeard));
    }

    #[test]
    fn largest_wins_and_same_sender_refreshes() {
        let mut st = NcnStore::default();
        let life = Duration::from_secs_f64(2.0);
        st.handle_ncn(s(1.0), 7, 0.002, life);
        st.handle_ncn(s(1.1), 8, 0.001, life);
        assert_eq!(st.current(s(1.2)), 0.002);
        assert_eq!(st.current_sender(s(1.2)), Some(7));
        st.handle_ncn(s(1.3), 9, 0.003, life);
        assert_eq!(st.current_sender(s(1.4)), Some(9));
        // The stored sender lowers its value: both fields are replaced.
        st.handle_ncn(s(2.0), 9, 0.0005, life);
        assert_eq!(st.current(s(2.1)), 0.0005);
        // ... and its lifetime restarts from the new notification.
        assert_eq!(st.current(s(3.9)), 0.0005);
        assert_eq!(st.current(s(4.0)), 0.0);
        assert_eq!(st.current_sender(s(4.0)), None);
    }

    #[test]
    fn lifetime_expiry_lets_a_smaller_one_in() {
        let mut st = NcnStore::default();
        let life = Duration::from_secs_f64(2.0);
        st.handle_ncn(s(0.0), 1, 0.01, life);
        assert_eq!(st.current(s(1.999)), 0.01);
        assert_eq!(st.current(s(2.0)), 0.0);
        st.handle_ncn(s(2.5), 2, 0.001, life);
        assert_eq!(st.current(s(2.6)), 0.001);
    }

    #[test]
    fn heard_max_looks_back_one_window() {
        let mut st = NcnStore::default();
        let life = Duration::from_secs_f64(2.0);
        let w = Duration::from_secs_f64(1.0);
        st.handle_ncn(s(0.5), 1, 0.004, life);
        st.handle_ncn(s(1.2), 2, 0.001, life);
        assert_eq!(st.heard_max(s(1.4), w), 0.004);
        assert_eq!(st.heard_max(s(1.6), w), 0.001);
        assert_eq!(st.heard_max(s(2.3), w), 0.0);
    }
}
