pub mod aodv;
