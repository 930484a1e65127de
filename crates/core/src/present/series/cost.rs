//! Cost: dollars per concurrent request-hour and per million output tokens, one bar per GPU.

use crate::base::units::usd_per_million_tokens;
use serde::{Deserialize, Serialize};

/// One GPU's cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostBar {
    /// GPU display name.
    pub gpu: String,
    /// Price of the replica (all its GPUs), US dollars per hour.
    pub usd_per_hour: f64,
    /// Concurrent requests the replica serves.
    pub concurrent_requests: u64,
    /// Dollars per hour per concurrent request: usd_per_hour / concurrent_requests
    /// (`None` when no request fits).
    pub usd_per_request_hour: Option<f64>,
    /// Dollars per million output tokens, from the performance model when known:
    /// usd_per_hour / (3600 × total tokens/s) × 10^6.
    pub usd_per_million_tokens: Option<f64>,
}

/// Which cost the bar chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostMetric {
    /// $ per hour per concurrent request (the chapter's comparison).
    #[default]
    PerRequestHour,
    /// $ per million output tokens.
    PerMillionTokens,
}

/// The cost chart: one bar per GPU with a public price.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CostBars {
    /// One bar per GPU.
    pub bars: Vec<CostBar>,
    /// What the bars measure.
    pub metric: CostMetric,
}

impl CostBar {
    /// From a price, a concurrency and optionally a total throughput (output tokens/s).
    pub fn new(
        gpu: impl Into<String>,
        usd_per_hour: f64,
        concurrent_requests: u64,
        total_tokens_per_s: Option<f64>,
    ) -> CostBar {
        let price_ok = usd_per_hour.is_finite() && usd_per_hour >= 0.0;
        CostBar {
            gpu: gpu.into(),
            usd_per_hour,
            concurrent_requests,
            usd_per_request_hour: (price_ok && concurrent_requests > 0)
                .then(|| usd_per_hour / concurrent_requests as f64),
            usd_per_million_tokens: total_tokens_per_s
                .filter(|t| price_ok && t.is_finite() && *t > 0.0)
                .map(|t| usd_per_million_tokens(usd_per_hour, 3600.0 * t)),
        }
    }

    /// The value the chart shows for `metric`.
    pub fn value(&self, metric: CostMetric) -> Option<f64> {
        match metric {
            CostMetric::PerRequestHour => self.usd_per_request_hour,
            CostMetric::PerMillionTokens => self.usd_per_million_tokens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_per_request_follows_the_chapter() {
        // A10G $1.006/h serving 4, L40S $1.861/h serving 16.
        let a = CostBar::new("A10G", 1.006, 4, None);
        let l = CostBar::new("L40S", 1.861, 16, Some(1000.0));
        let (Some(ca), Some(cl)) = (a.usd_per_request_hour, l.usd_per_request_hour) else {
            panic!("costs missing");
        };
        assert!((ca - 1.006 / 4.0).abs() < 1e-12 && cl < ca);
        assert!((l.usd_per_million_tokens.unwrap_or(0.0) - 1.861 / 3.6).abs() < 1e-9);
        assert!(CostBar::new("x", 1.0, 0, None)
            .usd_per_request_hour
            .is_none());
    }
}
