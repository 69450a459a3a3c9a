//! Seeded random streams. Every draw comes from a stream derived from
//! (run seed, node, purpose), so adding a draw for one purpose never shifts
//! another purpose's sequence (DESIGN.md principle 3).

use rand_pcg::Pcg64Mcg;

/// What a random stream is used for; part of the stream's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Purpose {
    /// The DCF's backoff slots (IEEE 802.11-2012 §9.3.3), one stream per station.
    Backoff = 1,
    /// Random placement of the nodes, drawn once per scenario.
    Topology = 2,
    /// Flow endpoints the scenario draws, and on/off sources' object sizes,
    /// pages and think times.
    Traffic = 3,
    /// AODV's broadcast jitter, which keeps neighbours' rebroadcasts of one
    /// RREQ from colliding (RFC 5148).
    Routing = 4,
    /// Reserved for TCP draws; no variant draws yet, the value stays
    /// taken so that the other streams keep their identity.
    Transport = 5,
    /// Random waypoint destinations, speeds and pauses.
    Mobility = 6,
    /// Early drops of RED and NRED (Floyd & Jacobson 1993; Xu et al.
    /// Algorithm 5.2).
    Queue = 7,
    /// A scheme's own timing, e.g. the phase of NRED's NCN broadcasts.
    Scheme = 8,
    /// Reception models that draw (frame success under an error-rate model).
    Reception = 9,
    /// Fast-forward's coin (Berger et al. §3.2), so that turning it on
    /// leaves the backoff draws as they are.
    FastForward = 10,
}

/// SplitMix64 finaliser: a good bijective mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream for (seed, node, purpose). `node` is `u64::MAX` for
/// streams that belong to the scenario rather than a node.
pub fn stream(seed: u64, node: u64, purpose: Purpose) -> Pcg64Mcg {
    let a = mix(seed ^ mix(node.wrapping_add(0x1234_5678)));
    let b = mix(a ^ mix(purpose as u64));
    let lo = mix(b) as u128;
    let hi = mix(b ^ 0xA5A5_A5A5_A5A5_A5A5) as u128;
    Pcg64Mcg::new((hi << 64) | lo | 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn draws(seed: u64, node: u64, purpose: Purpose) -> Vec<u32> {
        let mut r = stream(seed, node, purpose);
        (0..8).map(|_| r.gen()).collect()
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a = draws(1, 2, Purpose::Backoff);
        assert_eq!(a, draws(1, 2, Purpose::Backoff));
        assert_ne!(a, draws(1, 3, Purpose::Backoff));
        assert_ne!(a, draws(1, 2, Purpose::Traffic));
        assert_ne!(a, draws(2, 2, Purpose::Backoff));
    }
}
