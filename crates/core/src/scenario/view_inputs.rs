//! The inputs the analysis views add to the scenario, each with its URL parameter: the
//! performance model's efficiencies ([`EffField`]), the planner's traffic and targets
//! ([`PlannerInputs`], [`PlanField`]), the matmul explorer's shape and price overrides.

use super::notice::{parse_count, NoticeKind};
use super::search_inputs::SearchInputs;
use super::serving_inputs::ServingInputs;
use crate::base::url::{pct_decode, pct_encode};
use crate::calc::capacity::{self, Family};
use crate::calc::perf::Efficiencies;
use crate::calc::roofline::Matmul;
use serde::{Deserialize, Serialize};

/// The planner's traffic and latency targets (prompt and output lengths come from the
/// scenario's `perf` inputs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlannerInputs {
    /// Average request rate, requests per second.
    pub rate_rps: f64,
    /// Peak rate / average rate (×4 = the chapter's 400 % peak).
    pub peak_multiplier: f64,
    /// Time-to-first-token target, milliseconds.
    pub ttft_ms: f64,
    /// Time-per-output-token target, milliseconds.
    pub tpot_ms: f64,
    /// GPUs in one node for every candidate (`None` = each GPU's catalog default,
    /// `capacity::default_gpus_per_node`); URL `pl_node`.
    pub gpus_per_node: Option<u32>,
    /// The family of "largest model that meets the target"; URL `pl_fam`.
    pub family: Family,
}

impl Default for PlannerInputs {
    fn default() -> Self {
        PlannerInputs {
            rate_rps: 10.0,
            peak_multiplier: 4.0,
            ttft_ms: 2000.0,
            tpot_ms: 50.0,
            gpus_per_node: None,
            family: Family::Qwen3,
        }
    }
}

/// Inputs of the analysis views, part of the [`Scenario`] (and of its URL).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ViewInputs {
    /// Efficiencies of the performance model (defaults: the calibration fit).
    pub eff: Efficiencies,
    /// The matmul explorer's shape.
    pub matmul: Matmul,
    /// The planner's traffic and targets.
    pub plan: PlannerInputs,
    /// Price overrides, US dollars per GPU-hour, by GPU key (`a10g`, `custom-1`).
    pub prices: Vec<(String, f64)>,
    /// "Serving under load": the engine's knobs and the offered load.
    pub serving: ServingInputs,
    /// The planner's search (URL `ps…`).
    #[serde(default)]
    pub search: SearchInputs,
}

/// Accepted range of each matmul dimension (inclusive).
pub const MATMUL_DIM: (u64, u64) = (1, 1_000_000_000);
/// Accepted range of a price, US dollars per GPU-hour (inclusive).
pub const PRICE_RANGE: (f64, f64) = (0.0, 100_000.0);

/// One editable efficiency, in the unit the UI shows (fractions, or milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EffField {
    /// Compute efficiency in prefill (fraction).
    ComputePrefill,
    /// Compute efficiency in decode (fraction).
    ComputeDecode,
    /// Memory-bandwidth efficiency (fraction).
    Bandwidth,
    /// Interconnect efficiency of all-reduces (fraction).
    Interconnect,
    /// Fixed time per decode step, ms.
    StepOverheadMs,
    /// Fixed time per prefill pass, ms.
    PrefillOverheadMs,
    /// Latency per all-reduce, ms.
    AllreduceLatencyMs,
}

impl EffField {
    /// Every field, in display order.
    pub const ALL: &'static [EffField] = &[
        EffField::ComputePrefill,
        EffField::ComputeDecode,
        EffField::Bandwidth,
        EffField::Interconnect,
        EffField::StepOverheadMs,
        EffField::PrefillOverheadMs,
        EffField::AllreduceLatencyMs,
    ];

    /// URL parameter name.
    pub const fn query_key(self) -> &'static str {
        match self {
            EffField::ComputePrefill => "e_cp",
            EffField::ComputeDecode => "e_cd",
            EffField::Bandwidth => "e_bw",
            EffField::Interconnect => "e_ic",
            EffField::StepOverheadMs => "e_so",
            EffField::PrefillOverheadMs => "e_po",
            EffField::AllreduceLatencyMs => "e_ar",
        }
    }

    /// Translation key of the label.
    pub const fn label_key(self) -> &'static str {
        match self {
            EffField::ComputePrefill => "view_eff_compute_prefill",
            EffField::ComputeDecode => "view_eff_compute_decode",
            EffField::Bandwidth => "view_eff_bandwidth",
            EffField::Interconnect => "view_eff_interconnect",
            EffField::StepOverheadMs => "view_eff_step_overhead",
            EffField::PrefillOverheadMs => "view_eff_prefill_overhead",
            EffField::AllreduceLatencyMs => "view_eff_allreduce_latency",
        }
    }

    /// Translation key of the unit.
    pub const fn unit_key(self) -> &'static str {
        match self {
            EffField::StepOverheadMs
            | EffField::PrefillOverheadMs
            | EffField::AllreduceLatencyMs => "view_unit_ms",
            _ => "view_unit_fraction",
        }
    }

    /// Accepted range in display units (inclusive).
    pub const fn range(self) -> (f64, f64) {
        match self {
            EffField::StepOverheadMs
            | EffField::PrefillOverheadMs
            | EffField::AllreduceLatencyMs => (0.0, 10_000.0),
            _ => (0.01, 1.0),
        }
    }

    /// The value in display units.
    pub fn get(self, e: &Efficiencies) -> f64 {
        match self {
            EffField::ComputePrefill => e.compute_prefill,
            EffField::ComputeDecode => e.compute_decode,
            EffField::Bandwidth => e.bandwidth,
            EffField::Interconnect => e.interconnect,
            EffField::StepOverheadMs => e.step_overhead_s * 1e3,
            EffField::PrefillOverheadMs => e.prefill_overhead_s * 1e3,
            EffField::AllreduceLatencyMs => e.allreduce_latency_s * 1e3,
        }
    }

    /// Whether every efficiency of `a` is within the relative tolerance `rel` of `b`'s: a fit
    /// re-run from efficiencies it wrote itself (rounded by the URL) lands within its own
    /// stopping tolerance of them, not exactly on them.
    pub fn all_close(a: &Efficiencies, b: &Efficiencies, rel: f64) -> bool {
        EffField::ALL.iter().all(|f| {
            let (x, y) = (f.get(a), f.get(b));
            (x - y).abs() <= rel * x.abs().max(y.abs())
        })
    }

    /// Sets the value from display units.
    pub fn set(self, e: &mut Efficiencies, v: f64) {
        match self {
            EffField::ComputePrefill => e.compute_prefill = v,
            EffField::ComputeDecode => e.compute_decode = v,
            EffField::Bandwidth => e.bandwidth = v,
            EffField::Interconnect => e.interconnect = v,
            EffField::StepOverheadMs => e.step_overhead_s = v / 1e3,
            EffField::PrefillOverheadMs => e.prefill_overhead_s = v / 1e3,
            EffField::AllreduceLatencyMs => e.allreduce_latency_s = v / 1e3,
        }
    }
}

/// One planner input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlanField {
    /// Average request rate, req/s.
    Rate,
    /// Peak multiplier.
    Peak,
    /// TTFT target, ms.
    TtftMs,
    /// TPOT target, ms.
    TpotMs,
}

impl PlanField {
    /// Every field, in display order.
    pub const ALL: &'static [PlanField] = &[
        PlanField::Rate,
        PlanField::Peak,
        PlanField::TtftMs,
        PlanField::TpotMs,
    ];

    /// URL parameter name.
    pub const fn query_key(self) -> &'static str {
        match self {
            PlanField::Rate => "pl_rate",
            PlanField::Peak => "pl_peak",
            PlanField::TtftMs => "pl_ttft",
            PlanField::TpotMs => "pl_tpot",
        }
    }

    /// Translation key of the label.
    pub const fn label_key(self) -> &'static str {
        match self {
            PlanField::Rate => "view_plan_rate",
            PlanField::Peak => "view_plan_peak",
            PlanField::TtftMs => "view_plan_ttft",
            PlanField::TpotMs => "view_plan_tpot",
        }
    }

    /// Translation key of the unit.
    pub const fn unit_key(self) -> &'static str {
        match self {
            PlanField::Rate => "view_unit_rps",
            PlanField::Peak => "view_unit_times",
            PlanField::TtftMs | PlanField::TpotMs => "view_unit_ms",
        }
    }

    /// Accepted range (inclusive; a rate must also be above 0).
    pub const fn range(self) -> (f64, f64) {
        match self {
            PlanField::Rate => (0.001, 1e9),
            PlanField::Peak => (1.0, 1000.0),
            PlanField::TtftMs | PlanField::TpotMs => (0.01, 3_600_000.0),
        }
    }

    /// The value.
    pub fn get(self, p: &PlannerInputs) -> f64 {
        match self {
            PlanField::Rate => p.rate_rps,
            PlanField::Peak => p.peak_multiplier,
            PlanField::TtftMs => p.ttft_ms,
            PlanField::TpotMs => p.tpot_ms,
        }
    }

    /// Sets the value.
    pub fn set(self, p: &mut PlannerInputs, v: f64) {
        match self {
            PlanField::Rate => p.rate_rps = v,
            PlanField::Peak => p.peak_multiplier = v,
            PlanField::TtftMs => p.ttft_ms = v,
            PlanField::TpotMs => p.tpot_ms = v,
        }
    }
}

/// Parses a decimal in `r` (inclusive): `Err(Invalid)` when not a finite number,
/// `Err(OutOfRange)` when outside.
pub fn parse_f64_range(s: &str, r: (f64, f64)) -> Result<f64, NoticeKind> {
    let t = s.trim();
    if t.is_empty() || t.len() > 40 {
        return Err(NoticeKind::Invalid);
    }
    let x: f64 = t.parse().map_err(|_| NoticeKind::Invalid)?;
    if !x.is_finite() {
        return Err(NoticeKind::Invalid);
    }
    if x < r.0 || x > r.1 {
        return Err(NoticeKind::OutOfRange);
    }
    Ok(x)
}

/// Parses GPUs per node, a whole number in `capacity::GPUS_PER_NODE_RANGE`.
pub fn parse_gpus_per_node(s: &str) -> Result<u32, NoticeKind> {
    let (lo, hi) = capacity::GPUS_PER_NODE_RANGE;
    match parse_count(s) {
        Some(n) if n >= u64::from(lo) && n <= u64::from(hi) => {
            u32::try_from(n).map_err(|_| NoticeKind::OutOfRange)
        }
        Some(_) => Err(NoticeKind::OutOfRange),
        None => Err(NoticeKind::Invalid),
    }
}

/// Parses a matmul dimension (`4096`, `4,096`, `4k`).
pub fn parse_dim(s: &str) -> Result<u64, NoticeKind> {
    match parse_count(s) {
        Some(n) if n >= MATMUL_DIM.0 && n <= MATMUL_DIM.1 => Ok(n),
        Some(_) => Err(NoticeKind::OutOfRange),
        None => Err(NoticeKind::Invalid),
    }
}

impl ViewInputs {
    /// Whether `key` is one of this struct's URL parameters.
    pub fn owns(key: &str) -> bool {
        EffField::ALL.iter().any(|f| f.query_key() == key)
            || PlanField::ALL.iter().any(|f| f.query_key() == key)
            || matches!(key, "pl_node" | "pl_fam")
            || matches!(key, "mm_m" | "mm_n" | "mm_k" | "price")
            || ServingInputs::owns(key)
            || SearchInputs::owns(key)
    }

    /// Reads one URL parameter (already percent-decoded); the value is left unchanged on error.
    pub fn set(&mut self, key: &str, val: &str) -> Result<(), NoticeKind> {
        if ServingInputs::owns(key) {
            return self.serving.set(key, val);
        }
        if SearchInputs::owns(key) {
            return self.search.set(key, val);
        }
        if let Some(f) = EffField::ALL.iter().find(|f| f.query_key() == key) {
            let v = parse_f64_range(val, f.range())?;
            f.set(&mut self.eff, v);
            return Ok(());
        }
        if let Some(f) = PlanField::ALL.iter().find(|f| f.query_key() == key) {
            let v = parse_f64_range(val, f.range())?;
            f.set(&mut self.plan, v);
            return Ok(());
        }
        match key {
            "pl_node" => self.plan.gpus_per_node = Some(parse_gpus_per_node(val)?),
            "pl_fam" => {
                self.plan.family = Family::parse(val).map_err(|_| NoticeKind::Invalid)?;
            }
            "mm_m" => self.matmul.m = parse_dim(val)?,
            "mm_n" => self.matmul.n = parse_dim(val)?,
            "mm_k" => self.matmul.k = parse_dim(val)?,
            "price" => {
                let (k, v) = val.split_once(':').ok_or(NoticeKind::Invalid)?;
                let k = k.trim().to_ascii_lowercase();
                let ok_id = !k.is_empty()
                    && k.len() <= 100
                    && k.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
                if !ok_id {
                    return Err(NoticeKind::Invalid);
                }
                let p = parse_f64_range(v, PRICE_RANGE)?;
                self.set_price(&k, Some(p));
            }
            _ => return Err(NoticeKind::UnknownParam),
        }
        Ok(())
    }

    /// The URL parameters that differ from the defaults, `key=value` each.
    pub fn query_parts(&self) -> Vec<String> {
        let d = ViewInputs::default();
        let mut q = Vec::new();
        for f in EffField::ALL {
            let v = f.get(&self.eff);
            if v.to_bits() != f.get(&d.eff).to_bits() {
                q.push(format!("{}={}", f.query_key(), v));
            }
        }
        if self.matmul.m != d.matmul.m {
            q.push(format!("mm_m={}", self.matmul.m));
        }
        if self.matmul.n != d.matmul.n {
            q.push(format!("mm_n={}", self.matmul.n));
        }
        if self.matmul.k != d.matmul.k {
            q.push(format!("mm_k={}", self.matmul.k));
        }
        for f in PlanField::ALL {
            let v = f.get(&self.plan);
            if v.to_bits() != f.get(&d.plan).to_bits() {
                q.push(format!("{}={}", f.query_key(), v));
            }
        }
        if let Some(n) = self.plan.gpus_per_node {
            q.push(format!("pl_node={n}"));
        }
        if self.plan.family != d.plan.family {
            q.push(format!("pl_fam={}", self.plan.family.id()));
        }
        for (k, p) in &self.prices {
            q.push(format!("price={}", pct_encode(&format!("{k}:{p}"))));
        }
        q.extend(self.serving.query_parts());
        q.extend(self.search.query_parts());
        q
    }

    /// The price override for a GPU key, when set.
    pub fn price(&self, key: &str) -> Option<f64> {
        self.prices.iter().find(|(k, _)| k == key).map(|(_, p)| *p)
    }

    /// Sets (or with `None` removes) the price override of a GPU key.
    pub fn set_price(&mut self, key: &str, price: Option<f64>) {
        self.prices.retain(|(k, _)| k != key);
        if let Some(p) = price {
            self.prices.push((key.to_string(), p));
        }
    }
}

/// Reads a whole query into a [`ViewInputs`] (test helper and tool for callers that only need
/// this part); unknown keys are ignored.
pub fn view_inputs_from_query(query: &str) -> ViewInputs {
    let mut v = ViewInputs::default();
    for pair in query.trim_start_matches('?').split('&') {
        let (k, val) = pair.split_once('=').unwrap_or((pair, ""));
        let k = pct_decode(k);
        if ViewInputs::owns(&k) {
            let _ = v.set(&k, &pct_decode(val));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn efficiencies_close_within_a_relative_tolerance() {
        let a = Efficiencies::default();
        for f in EffField::ALL {
            let mut b = a;
            f.set(&mut b, f.get(&a) * 1.005);
            assert!(EffField::all_close(&a, &b, 0.01), "{f:?} 0.5% apart");
            f.set(&mut b, f.get(&a) * 1.02);
            assert!(!EffField::all_close(&a, &b, 0.01), "{f:?} 2% apart");
            assert!(
                !EffField::all_close(&b, &a, 0.01),
                "{f:?} 2% apart, swapped"
            );
        }
    }

    /// Reads link parameters, each of which must be accepted.
    fn read(q: &str) -> ViewInputs {
        let mut back = ViewInputs::default();
        for pair in q.split('&').filter(|p| !p.is_empty()) {
            let (k, val) = pair.split_once('=').unwrap_or((pair, ""));
            assert_eq!(back.set(k, val), Ok(()), "{pair}");
        }
        back
    }

    proptest! {
        /// Any efficiencies in range, set as the app's fields and the link set them (display
        /// units), survive the link exactly, and the defaults write nothing.
        #[test]
        fn efficiencies_round_trip_through_the_link(
            cp in 0.01f64..=1.0, cd in 0.01f64..=1.0, bw in 0.01f64..=1.0, ic in 0.01f64..=1.0,
            so in 0.0f64..=10_000.0, po in 0.0f64..=10_000.0, ar in 0.0f64..=10_000.0,
            which in 0u8..128,
        ) {
            let mut v = ViewInputs::default();
            let picked = [cp, cd, bw, ic, so, po, ar];
            for (i, f) in EffField::ALL.iter().enumerate() {
                if which & (1 << i) != 0 {
                    f.set(&mut v.eff, picked[i]);
                }
            }
            let q = v.query_parts().join("&");
            let changed = EffField::ALL
                .iter()
                .filter(|f| f.get(&v.eff).to_bits() != f.get(&Efficiencies::default()).to_bits())
                .count();
            prop_assert_eq!(q.matches('=').count(), changed, "{}", q);
            prop_assert_eq!(read(&q), v, "{}", q);
        }

        /// Overheads in seconds as a fit returns them: the link keeps them to within a few
        /// units in the last place (the link writes milliseconds, and not every f64 of seconds
        /// is some f64 of milliseconds / 1000; about 2% are not), and from then on it is exact.
        #[test]
        fn fitted_overheads_in_seconds_survive_the_link(
            so in 0.0f64..=10.0, po in 0.0f64..=10.0, ar in 0.0f64..=10.0,
        ) {
            let mut v = ViewInputs::default();
            v.eff.step_overhead_s = so;
            v.eff.prefill_overhead_s = po;
            v.eff.allreduce_latency_s = ar;
            let once = read(&v.query_parts().join("&"));
            for (a, b) in [
                (once.eff.step_overhead_s, so),
                (once.eff.prefill_overhead_s, po),
                (once.eff.allreduce_latency_s, ar),
            ] {
                prop_assert!((a - b).abs() <= 8.0 * f64::EPSILON * b, "{} vs {}", a, b);
            }
            prop_assert_eq!(read(&once.query_parts().join("&")), once);
        }

        /// A bad value (not a number, NaN, ≤ 0 or > 1 for a fraction, negative or beyond 10 s
        /// for an overhead) is refused and keeps the default.
        #[test]
        fn bad_efficiency_values_keep_the_default(
            i in 0usize..7,
            bad in prop_oneof![
                Just("NaN".to_string()), Just("inf".to_string()), Just("abc".to_string()),
                Just(String::new()), (-1e6f64..=0.0).prop_map(|x| x.to_string()),
            ],
        ) {
            let f = EffField::ALL[i];
            let mut v = ViewInputs::default();
            prop_assert!(v.set(f.query_key(), &bad).is_err());
            prop_assert_eq!(v, ViewInputs::default());
        }
    }

    #[test]
    fn a_fraction_above_one_is_out_of_range() {
        for f in EffField::ALL.iter().filter(|f| f.range().1 == 1.0) {
            let mut v = ViewInputs::default();
            assert_eq!(v.set(f.query_key(), "1.0001"), Err(NoticeKind::OutOfRange));
            assert_eq!(v.set(f.query_key(), "1"), Ok(()));
        }
    }
}
