//! How the section's load is offered: how requests arrive and how their lengths are drawn
//! (vLLM bench's `--request-rate`, `--max-concurrency`, `--dataset-name`), with their URL
//! values.

use serde::{Deserialize, Serialize};

/// How requests arrive (vLLM bench's `--request-rate`, `--burstiness`, `--max-concurrency`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalKind {
    /// Poisson arrivals at each swept rate.
    #[default]
    Poisson,
    /// Gamma gaps with a coefficient of variation
    /// ([`ServingInputs::burstiness_cv`](super::ServingInputs::burstiness_cv)).
    Bursty,
    /// At most [`ServingInputs::max_concurrency`](super::ServingInputs::max_concurrency)
    /// requests in flight.
    MaxConcurrency,
    /// The chosen run sends every request at once (`--request-rate inf`).
    Inf,
}

impl ArrivalKind {
    /// Every kind, in display order.
    pub const ALL: &'static [ArrivalKind] = &[
        ArrivalKind::Poisson,
        ArrivalKind::Bursty,
        ArrivalKind::MaxConcurrency,
        ArrivalKind::Inf,
    ];

    /// URL value.
    pub const fn id(self) -> &'static str {
        match self {
            ArrivalKind::Poisson => "poisson",
            ArrivalKind::Bursty => "bursty",
            ArrivalKind::MaxConcurrency => "conc",
            ArrivalKind::Inf => "inf",
        }
    }

    /// Translation key of the option's label.
    pub const fn label_key(self) -> &'static str {
        match self {
            ArrivalKind::Poisson => "sv_arrival_poisson",
            ArrivalKind::Bursty => "sv_arrival_bursty",
            ArrivalKind::MaxConcurrency => "sv_arrival_conc",
            ArrivalKind::Inf => "sv_arrival_inf",
        }
    }

    /// Reads a URL value.
    pub fn parse(s: &str) -> Option<ArrivalKind> {
        ArrivalKind::ALL
            .iter()
            .copied()
            .find(|k| k.id() == s.trim())
    }
}

/// How prompt and output lengths are drawn (vLLM bench's `--dataset-name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DatasetKind {
    /// Every request the workload's prompt and output lengths.
    #[default]
    Fixed,
    /// Uniform within ±[`UNIFORM_RANGE_RATIO`] of them (`random` with a range ratio).
    Uniform,
    /// The built-in ShareGPT-like distribution (`core::sim::SHAREGPT`).
    ShareGpt,
}

/// The range ratio of the uniform dataset (vLLM bench `--random-range-ratio`).
pub const UNIFORM_RANGE_RATIO: f64 = 0.5;

impl DatasetKind {
    /// Every kind, in display order.
    pub const ALL: &'static [DatasetKind] = &[
        DatasetKind::Fixed,
        DatasetKind::Uniform,
        DatasetKind::ShareGpt,
    ];

    /// URL value.
    pub const fn id(self) -> &'static str {
        match self {
            DatasetKind::Fixed => "fixed",
            DatasetKind::Uniform => "uniform",
            DatasetKind::ShareGpt => "sharegpt",
        }
    }

    /// Translation key of the option's label.
    pub const fn label_key(self) -> &'static str {
        match self {
            DatasetKind::Fixed => "sv_dataset_fixed",
            DatasetKind::Uniform => "sv_dataset_uniform",
            DatasetKind::ShareGpt => "sv_dataset_sharegpt",
        }
    }

    /// Reads a URL value.
    pub fn parse(s: &str) -> Option<DatasetKind> {
        DatasetKind::ALL
            .iter()
            .copied()
            .find(|k| k.id() == s.trim())
    }
}
