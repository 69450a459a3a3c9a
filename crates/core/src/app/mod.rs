//! Application sources that feed the transport layer, as sans-IO
//! generators driven by the engine.

pub mod onoff;
