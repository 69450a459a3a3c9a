//! OPET's per-node agent (Zhai et al.; docs/opet.md): the upstream records
//! a congested node keeps for the flows it refused, and the flow labels.
//! The blocked table lives in the interface queue (`net/queue.rs`), the
//! frames and the ready-to-receive contention in the DCF (`mac/dcf.rs`).

use crate::flow::FlowSpec;
use crate::net::packet::{Packet, NO_FLOW};
use crate::time::Duration;

/// Node `node` refused an RTS of flow `label` from `upstream`: it owes
/// that node a ready-to-receive frame once its count of the flow falls
/// below the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub label: u32,
    pub upstream: u32,
    /// Airtime of the DATA the refused RTS announced.
    pub t_data: Duration,
}

pub struct OpetAgent {
    /// Upstream records, per node.
    records: Vec<Vec<Record>>,
    /// Each flow's (source, destination).
    ends: Vec<(u32, u32)>,
}

impl OpetAgent {
    pub fn new(nodes: usize, flows: &[FlowSpec]) -> Self {
        OpetAgent {
            records: vec![Vec::new(); nodes],
            ends: flows.iter().map(|f| (f.src, f.dst)).collect(),
        }
    }

    /// A packet's flow label: its flow and direction (a TCP connection's
    /// data and its ACKs are two flows); None for packets of no flow.
    pub fn label(&self, p: &Packet) -> Option<u32> {
        if p.flow == NO_FLOW || p.is_control() {
            return None;
        }
        let (_, dst) = *self.ends.get(p.flow as usize)?;
        Some(p.flow * 2 + u32::from(p.dst != dst))
    }

    /// The node where flow `label` ends; it is never congested.
    pub fn destination(&self, label: u32) -> Option<u32> {
        let (src, dst) = *self.ends.get((label / 2) as usize)?;
        Some(if label % 2 == 0 { dst } else { src })
    }

    /// Remembers that `node` refused `label` from `upstream`.
    pub fn record(&mut self, node: u32, r: Record) {
        let rs = &mut self.records[node as usize];
        match rs.iter_mut().find(|x| x.label == r.label && x.upstream == r.upstream) {
            Some(x) => x.t_data = r.t_data,
            None => rs.push(r),
        }
    }

    /// Forgets the record of (`label`, `upstream`) at `node`; true if one was kept.
    pub fn clear(&mut self, node: u32, label: u32, upstream: u32) -> bool {
        let rs = &mut self.records[node as usize];
        let before = rs.len();
        rs.retain(|x| !(x.label == label && x.upstream == upstream));
        rs.len() != before
    }

    /// The records of `label` at `node`.
    pub fn records_of(&self, node: u32, label: u32) -> impl Iterator<Item = Record> + '_ {
        self.records[node as usize]
            .iter()
            .copied()
            .filter(move |r| r.label == label)
    }
}
