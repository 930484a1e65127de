//! The planner's search inputs (`core::sim::search` in the app), each with its URL parameter
//! (`ps…`): whether the search is on (`ps=1`: the planner runs it whenever it is on screen and
//! its inputs change), the engines (`ps_eng=vllm,sglang,trtllm`, default all), the layouts
//! (`ps_lay=agg|disagg|both`, default both), speculative decoding with the checkpoint's MTP
//! module (`ps_spec=0|1`, default on) and the largest deployment (`ps_max=N` GPUs, default
//! [`DEFAULT_MAX_GPUS`]). The rate, the P99 targets, the lengths, the GPUs and their prices
//! are the planner's own inputs.

use super::notice::{parse_u64_in, NoticeKind};
use crate::sim::engines::EngineKind;
use crate::sim::search::{DEFAULT_MAX_GPUS, MAX_SEARCH_GPUS};
use serde::{Deserialize, Serialize};

/// The layouts searched (URL `ps_lay`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SearchLayouts {
    /// Aggregated instances and disaggregated prefill/decode pools.
    #[default]
    Both,
    /// Aggregated instances only.
    Aggregated,
    /// Disaggregated pools only.
    Disaggregated,
}

impl SearchLayouts {
    /// Every choice, in display order.
    pub const ALL: [SearchLayouts; 3] = [
        SearchLayouts::Both,
        SearchLayouts::Aggregated,
        SearchLayouts::Disaggregated,
    ];

    /// URL value (the CLI's `--layouts` names).
    pub const fn id(self) -> &'static str {
        match self {
            SearchLayouts::Both => "both",
            SearchLayouts::Aggregated => "agg",
            SearchLayouts::Disaggregated => "disagg",
        }
    }

    /// Translation key of the option's label.
    pub const fn label_key(self) -> &'static str {
        match self {
            SearchLayouts::Both => "ps_layouts_both",
            SearchLayouts::Aggregated => "ps_layouts_agg",
            SearchLayouts::Disaggregated => "ps_layouts_disagg",
        }
    }

    /// Reads a URL value.
    pub fn parse(s: &str) -> Option<SearchLayouts> {
        SearchLayouts::ALL.into_iter().find(|l| l.id() == s.trim())
    }

    /// (aggregated, disaggregated) searched.
    pub const fn flags(self) -> (bool, bool) {
        match self {
            SearchLayouts::Both => (true, true),
            SearchLayouts::Aggregated => (true, false),
            SearchLayouts::Disaggregated => (false, true),
        }
    }
}

/// The planner's search inputs, part of the scenario's [`ViewInputs`](super::ViewInputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchInputs {
    /// The search is on (URL `ps=1`).
    pub on: bool,
    /// Engines searched, one flag per [`EngineKind::ALL`] entry (URL `ps_eng`, a list).
    pub engines: [bool; 3],
    /// Layouts searched (URL `ps_lay`).
    pub layouts: SearchLayouts,
    /// Speculative decoding with the checkpoint's MTP module tried (URL `ps_spec`).
    pub speculative: bool,
    /// The largest deployment, GPUs (URL `ps_max`).
    pub max_gpus: u64,
}

impl Default for SearchInputs {
    fn default() -> Self {
        SearchInputs {
            on: false,
            engines: [true; 3],
            layouts: SearchLayouts::Both,
            speculative: true,
            max_gpus: DEFAULT_MAX_GPUS,
        }
    }
}

/// Accepted range of `ps_max`, GPUs (inclusive).
pub const SEARCH_MAX_GPUS_RANGE: (u64, u64) = (1, MAX_SEARCH_GPUS);

/// Reads `0` or `1`.
fn parse_flag(val: &str) -> Result<bool, NoticeKind> {
    match val.trim() {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(NoticeKind::Invalid),
    }
}

impl SearchInputs {
    /// Whether `key` is one of these inputs' URL parameters.
    pub fn owns(key: &str) -> bool {
        matches!(key, "ps" | "ps_eng" | "ps_lay" | "ps_spec" | "ps_max")
    }

    /// The engines searched, in [`EngineKind::ALL`]'s order.
    pub fn engine_list(&self) -> Vec<EngineKind> {
        EngineKind::ALL
            .into_iter()
            .zip(self.engines)
            .filter_map(|(e, on)| on.then_some(e))
            .collect()
    }

    /// Whether `engine` is searched.
    pub fn has_engine(&self, engine: EngineKind) -> bool {
        EngineKind::ALL
            .iter()
            .position(|e| *e == engine)
            .is_some_and(|i| self.engines[i])
    }

    /// Searches `engine` or not; the last engine is never turned off (`false` when refused).
    pub fn set_engine(&mut self, engine: EngineKind, on: bool) -> bool {
        let Some(i) = EngineKind::ALL.iter().position(|e| *e == engine) else {
            return false;
        };
        let mut next = self.engines;
        next[i] = on;
        if !next.contains(&true) {
            return false;
        }
        self.engines = next;
        true
    }

    /// Reads one URL parameter (already percent-decoded); unchanged on error.
    pub fn set(&mut self, key: &str, val: &str) -> Result<(), NoticeKind> {
        match key {
            "ps" => self.on = parse_flag(val)?,
            "ps_spec" => self.speculative = parse_flag(val)?,
            "ps_lay" => self.layouts = SearchLayouts::parse(val).ok_or(NoticeKind::Invalid)?,
            "ps_max" => self.max_gpus = parse_u64_in(val, SEARCH_MAX_GPUS_RANGE)?,
            "ps_eng" => {
                let mut engines = [false; 3];
                if val.len() > 100 {
                    return Err(NoticeKind::Invalid);
                }
                for id in val.split(',') {
                    let e = EngineKind::from_id(id).ok_or(NoticeKind::Invalid)?;
                    if let Some(i) = EngineKind::ALL.iter().position(|k| *k == e) {
                        engines[i] = true;
                    }
                }
                self.engines = engines;
            }
            _ => return Err(NoticeKind::UnknownParam),
        }
        Ok(())
    }

    /// The URL parameters that differ from the defaults, `key=value` each.
    pub fn query_parts(&self) -> Vec<String> {
        let d = SearchInputs::default();
        let mut q = Vec::new();
        if self.on {
            q.push("ps=1".to_string());
        }
        if self.engines != d.engines {
            let ids: Vec<&str> = self.engine_list().iter().map(|e| e.id()).collect();
            q.push(format!("ps_eng={}", ids.join(",")));
        }
        if self.layouts != d.layouts {
            q.push(format!("ps_lay={}", self.layouts.id()));
        }
        if self.speculative != d.speculative {
            q.push(format!("ps_spec={}", u8::from(self.speculative)));
        }
        if self.max_gpus != d.max_gpus {
            q.push(format!("ps_max={}", self.max_gpus));
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(q: &[String]) -> (SearchInputs, usize) {
        crate::scenario::read_parts(q, SearchInputs::set)
    }

    #[test]
    fn default_writes_nothing() {
        assert!(SearchInputs::default().query_parts().is_empty());
        assert_eq!(
            SearchInputs::default().engine_list(),
            EngineKind::ALL.to_vec()
        );
    }

    #[test]
    fn every_input_round_trips() {
        let v = SearchInputs {
            on: true,
            engines: [true, false, true],
            layouts: SearchLayouts::Disaggregated,
            speculative: false,
            max_gpus: 16,
        };
        let q = v.query_parts();
        assert_eq!(
            q,
            [
                "ps=1",
                "ps_eng=vllm,trtllm",
                "ps_lay=disagg",
                "ps_spec=0",
                "ps_max=16"
            ]
        );
        assert_eq!(read(&q), (v, 0));
        for l in SearchLayouts::ALL {
            let v = SearchInputs {
                layouts: l,
                ..SearchInputs::default()
            };
            assert_eq!(read(&v.query_parts()), (v, 0));
        }
    }

    #[test]
    fn bad_values_are_refused_and_leave_the_inputs() {
        let mut v = SearchInputs::default();
        for (k, val, kind) in [
            ("ps", "yes", NoticeKind::Invalid),
            ("ps_spec", "2", NoticeKind::Invalid),
            ("ps_lay", "mixed", NoticeKind::Invalid),
            ("ps_eng", "vllm,tgi", NoticeKind::Invalid),
            ("ps_eng", "", NoticeKind::Invalid),
            ("ps_max", "0", NoticeKind::OutOfRange),
            ("ps_max", "4096", NoticeKind::OutOfRange),
            ("ps_max", "-3", NoticeKind::OutOfRange),
            ("ps_max", "many", NoticeKind::Invalid),
            ("ps_max", "2.5", NoticeKind::OutOfRange),
        ] {
            assert_eq!(v.set(k, val), Err(kind), "{k}={val}");
        }
        assert_eq!(v, SearchInputs::default());
        assert_eq!(v.set("ps_zz", "1"), Err(NoticeKind::UnknownParam));
        assert_eq!(v.set("ps_eng", "SGLang"), Ok(()));
        assert_eq!(v.engine_list(), vec![EngineKind::Sglang]);
    }

    /// Through the whole scenario's link: the inputs come back; a bad `ps_max` gives one
    /// notice naming it and keeps the default while the other inputs are read.
    #[test]
    fn the_scenario_link_carries_the_search() {
        use crate::scenario::{Scenario, ViewInputs};
        let mut s = Scenario::default();
        s.views.search = SearchInputs {
            on: true,
            engines: [false, true, false],
            layouts: SearchLayouts::Aggregated,
            speculative: false,
            max_gpus: 8,
        };
        let q = s.to_query();
        let (back, notices) = Scenario::from_query(&q);
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(back, s, "{q}");
        let (back, notices) = Scenario::from_query("ps=1&ps_max=abc&ps_lay=agg&ps_max=0");
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert_eq!(
            (notices[0].param.as_str(), notices[0].kind, notices[0].count),
            ("ps_max", NoticeKind::Invalid, 2)
        );
        assert_eq!(back.views.search.max_gpus, DEFAULT_MAX_GPUS);
        assert!(back.views.search.on);
        assert_eq!(back.views.search.layouts, SearchLayouts::Aggregated);
        assert!(ViewInputs::owns("ps_eng"));
    }

    #[test]
    fn the_last_engine_stays() {
        let mut v = SearchInputs::default();
        assert!(v.set_engine(EngineKind::Vllm, false));
        assert!(v.set_engine(EngineKind::Sglang, false));
        assert!(!v.set_engine(EngineKind::Trtllm, false));
        assert_eq!(v.engine_list(), vec![EngineKind::Trtllm]);
        assert!(v.has_engine(EngineKind::Trtllm) && !v.has_engine(EngineKind::Vllm));
    }
}
