//! A test-only controller: Reno's window rules, a fixed pacing interval, a
//! chosen answer to the RTO backoff, and a record of every ACK it was shown.

use super::{AckInfo, Base, Controller, Window};
use crate::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct Probe {
    pub gap: Option<Duration>,
    pub no_backoff: bool,
    pub seen: Vec<AckInfo>,
}

impl Controller for Probe {
    fn base(&self) -> Base {
        Base::NewReno
    }
    fn on_ack_received(&mut self, _w: &Window, ack: &AckInfo) {
        self.seen.push(*ack);
    }
    fn on_rto(&mut self, w: &mut Window, flight_pkts: u64, first_expiry: bool) -> bool {
        super::reno_rto(w, flight_pkts, first_expiry);
        !self.no_backoff
    }
    fn pacing_interval(&self, _w: &Window) -> Option<Duration> {
        self.gap
    }
}
