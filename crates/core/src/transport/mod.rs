//! Transport protocols: sans-IO state machines that the engine wraps into
//! network packets (DESIGN.md principle 1).

pub mod tcp;
