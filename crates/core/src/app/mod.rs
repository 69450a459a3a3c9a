//! Traffic sources, as generators without I/O.

pub mod cbr;
pub mod onoff;
