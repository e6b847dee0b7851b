//! The parts of `kube-codegen` other crates use: the shapes of built-in kinds the CLI
//! generates apply configurations from, so that tests generate exactly what the CLI does.

pub mod shapes;
