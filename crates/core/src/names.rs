//! Mode keys of a scenario (`mac.queue`, `routing.protocol`, ...) as typed
//! enums: the file names the mode by a string, serde turns it into a variant
//! once, and an unknown string is refused with every allowed name listed.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};

/// An enum whose variants are named by fixed strings in scenario files.
pub trait Named: Sized + Copy + PartialEq + 'static {
    /// What a value is, with its article: "a queue discipline".
    const WHAT: &'static str;
    /// Every variant with its name, in the order messages list them.
    const ALL: &'static [(Self, &'static str)];

    /// The variant's name in scenario files.
    fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(v, _)| *v == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }

    /// The variant named `s`, or a message listing the allowed names, led
    /// by the nearest one when `s` looks misspelt.
    fn from_name(s: &str) -> Result<Self, String> {
        Self::ALL.iter().find(|(_, n)| *n == s).map(|(v, _)| *v).ok_or_else(|| {
            let lead = match nearest(s, Self::ALL.iter().map(|(_, n)| *n)) {
                Some(n) => format!("did you mean \"{n}\"? Allowed"),
                None => "allowed".to_string(),
            };
            format!(
                "\"{s}\" is not {}; {lead}: {}",
                Self::WHAT,
                Self::ALL
                    .iter()
                    .map(|(_, n)| format!("\"{n}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

/// The name of `names` nearest to `given`, if near enough to be what was
/// meant: at most two edits (a swap of neighbours counts as one), or a
/// third of the name's length for long names.
pub fn nearest<'a>(given: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    names
        .map(|n| (strsim::damerau_levenshtein(given, n), n))
        .min()
        .filter(|&(d, n)| d <= 2.max(n.len() / 3))
        .map(|(_, n)| n)
}

/// Serialises a named variant as its name.
pub fn serialize<T: Named, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v.name())
}

/// Reads a name; an unknown one is refused with the allowed names.
pub fn deserialize<'de, T: Named, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    let s = String::deserialize(d)?;
    T::from_name(&s).map_err(D::Error::custom)
}

/// Implements [`Named`], `Serialize` and `Deserialize` for an enum from a
/// table of variants and their names.
macro_rules! named {
    ($ty:ty, $what:literal, [$($var:expr => $name:literal),+ $(,)?]) => {
        impl $crate::names::Named for $ty {
            const WHAT: &'static str = $what;
            const ALL: &'static [(Self, &'static str)] = &[$(($var, $name)),+];
        }
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                $crate::names::serialize(self, s)
            }
        }
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::names::deserialize(d)
            }
        }
    };
}
pub(crate) use named;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::QueueKind;

    #[test]
    fn names_round_trip_and_unknown_ones_list_the_allowed() {
        for &(v, n) in QueueKind::ALL {
            assert_eq!(Named::name(v), n);
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{n}\""));
            assert_eq!(serde_json::from_str::<QueueKind>(&format!("\"{n}\"")).unwrap(), v);
        }
        let e = serde_json::from_str::<QueueKind>("\"fifo\"").unwrap_err().to_string();
        assert!(
            e.starts_with("\"fifo\" is not a queue discipline; allowed: \"droptail\", \"red\", \"nred\""),
            "{e}"
        );
    }
}
