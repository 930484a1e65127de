//! What is timed: a batch of `B` requests of `input_len` prompt and `output_len` generated
//! tokens at a TP degree and precisions ([`Workload`]), and which decode step TPOT describes
//! ([`DecodeContext`]).

use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use serde::{Deserialize, Serialize};

/// Which decode step TPOT describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DecodeContext {
    /// The step at the mean context `input + output / 2` (the average TPOT of the request).
    #[default]
    Mean,
    /// The last step, at context `input + output` (the slowest step).
    End,
}

/// The serving scenario: batch, lengths, parallelism and precisions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Concurrent sequences `B` (≥ 1).
    pub batch: u64,
    /// Prompt tokens per request `I` (≥ 1).
    pub input_len: u64,
    /// Generated tokens per request `O` (≥ 1).
    pub output_len: u64,
    /// Tensor-parallel degree (GPUs per replica, ≥ 1).
    pub tp: u64,
    /// Weight precision override; `None` = the checkpoint's own format.
    pub weights_dtype: Option<Dtype>,
    /// KV-cache precision; `None` = the checkpoint's 16-bit base precision.
    pub kv_dtype: Option<Dtype>,
    /// Which decode step TPOT describes.
    pub context: DecodeContext,
}

impl Workload {
    /// A workload with the checkpoint's precisions and TPOT at the mean context.
    pub fn new(batch: u64, input_len: u64, output_len: u64, tp: u64) -> Workload {
        Workload {
            batch,
            input_len,
            output_len,
            tp,
            weights_dtype: None,
            kv_dtype: None,
            context: DecodeContext::Mean,
        }
    }

    /// The context a decode step is timed at: the prompt plus half the output (the mean over
    /// the generation) or plus all of it (the last step).
    pub fn decode_context(&self) -> u64 {
        match self.context {
            DecodeContext::Mean => self.input_len + self.output_len / 2,
            DecodeContext::End => self.input_len + self.output_len,
        }
    }

    pub(super) fn validate(&self) -> Result<(), CalcError> {
        for (name, v, max) in [
            ("batch", self.batch, 1_000_000u64),
            ("input_len", self.input_len, 100_000_000),
            ("output_len", self.output_len, 100_000_000),
            ("tp", self.tp, 1024),
        ] {
            CalcError::whole_in(Phrase::verbatim(name), v, (1, max))?;
        }
        Ok(())
    }
}
