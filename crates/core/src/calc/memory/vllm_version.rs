//! Which vLLM release's start-up figures the budget follows ([`VllmVersion`]), and the rules
//! of those figures that changed across releases ([`VllmLogRules`]).
//!
//! vLLM's memory, blocks and paging are the same in every rule below; what changed is how it
//! turns them into the lines it logs. Each boundary was read from vLLM's history (the PR that
//! changed the code, the first release that carries it, and the public logs that show each
//! side; `tests/vllm_observations.rs` reproduces those logs with the versions they came from):
//!
//! * **Concurrency of one group of full-attention layers**
//!   ([`VllmVersion::CONCURRENCY_FROM_REQUEST_BLOCKS`], 0.9.1). vLLM V0 and V1 up to 0.9.0 log
//!   `X = blocks × block_size / max_model_len`. PR #19029 ("Max concurrency estimation and
//!   check_enough_kv_cache_memory for models with sliding window layers", merged June 2025)
//!   made `_get_kv_cache_config_uniform_type` in `vllm/v1/core/kv_cache_utils.py` call
//!   `get_max_concurrency_for_kv_cache_config`, which divides the blocks by the blocks one
//!   request holds: `X = blocks / ⌈L / block_size⌉` (the two differ only when `block_size`
//!   does not divide `L`). Grouped layouts (sliding windows, recurrent layers) are always
//!   `blocks / Σ_groups blocks_per_request` in V1.
//! * **The "GPU KV cache size: N tokens" figure** ([`VllmVersion::TOKENS_FROM_CONCURRENCY`],
//!   0.21.0). Up to 0.20, `_report_kv_cache_config` (earlier, the end of
//!   `_get_kv_cache_config_uniform_page_size`) logs `⌊blocks / groups⌋ × the smallest block
//!   size` (`blocks × block_size` with one group): a vLLM 0.19.2 log of Gemma 4 and logs of
//!   Qwen3-Next at 0.10.2 and 0.13.0 show it. PR #42206 ("Add group-aware KV cache capacity to
//!   vllm:cache_config_info", merged May 2026) made it `int(max_concurrency × max_model_len)`
//!   (`get_kv_cache_capacity`); vllm-project/vllm#43308 shows the change between 0.20.0 and
//!   0.21.0 (Gemma 4 31B on an A100: about 55k tokens, then about 525k, from the same 50 GB
//!   pool), and the 0.28.0 logs of Qwen3.5 show the new figure.
//! * **One line instead of two** ([`VllmVersion::ONE_LINE`], 0.27.0). PR #50462 ("Log KV cache
//!   capacity after block-size resolution", merged 2026-07-30, before the 0.27.0 release of
//!   August 2026) moved the log into `update_kv_cache_capacity` and printed "GPU KV cache size:
//!   N tokens, Maximum concurrency for L tokens per request: X×" as one line; the 0.28.0 logs
//!   show it.
//! * **Blocks a request holds in each recurrent group** ([`VllmVersion::ALIGN_STATE_BLOCKS`],
//!   0.28.0). `MambaSpec.max_memory_usage_bytes` (`vllm/v1/kv_cache_interface.py`) counts two
//!   pages per request under `mamba_cache_mode` "align" (the mode prefix caching selects) and one
//!   without prefix caching; vLLM 0.28.0 turned prefix caching on by default for hybrid models
//!   (vllm-project/vllm#50991), so a request of a model with recurrent layers beside attention
//!   holds two blocks in each recurrent group under the defaults. Two 0.28.0 logs of Qwen3.5
//!   (0.8B and 27B) fit only with two.
//!
//! Versions before [`VllmVersion::OLDEST`] (0.6.4, the oldest release whose log the project
//! reproduces) follow its rules, with a note. The default, [`VllmVersion::DEFAULT`], is the
//! newest release the project has a start-up log of ([`VllmVersion::NEWEST_LOGGED`], 0.28.0).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A vLLM release, `major.minor.patch` (ordered as releases are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct VllmVersion {
    /// Major version (0 so far).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch version.
    pub patch: u32,
}

/// How vLLM turns its block count into the logged "Maximum concurrency" figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConcurrencyRule {
    /// One group of full-attention layers: `blocks × block_size / max_model_len` (V0, V1 to
    /// 0.9.0).
    TokensOverLength,
    /// Every layout: the blocks over the blocks one request holds in all groups (0.9.1 on).
    BlocksOverRequest,
}

/// How vLLM computes the "GPU KV cache size: N tokens" figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheTokensRule {
    /// `⌊blocks / groups⌋ × the smallest block size` (to 0.20).
    BlocksPerGroup,
    /// `⌊max_concurrency × max_model_len⌋` (0.21 on).
    ConcurrencyTimesLength,
}

/// The rules of one release's start-up figures (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VllmLogRules {
    /// The release the figures follow: the one asked for, or [`VllmVersion::OLDEST`] for an
    /// older one.
    pub version: VllmVersion,
    /// The concurrency figure.
    pub concurrency: ConcurrencyRule,
    /// The cache-tokens figure.
    pub cache_tokens: CacheTokensRule,
    /// The cache tokens and the concurrency on one line.
    pub one_line: bool,
    /// Blocks one request holds in each recurrent group beside attention layers (1 or 2).
    pub state_blocks_per_request: u64,
}

impl VllmVersion {
    /// The release `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> VllmVersion {
        VllmVersion {
            major,
            minor,
            patch,
        }
    }

    /// The oldest release the rules know: 0.6.4, current when the V0 logs of
    /// vllm-project/vllm#10517 (December 2024) were written, the oldest the project reproduces.
    pub const OLDEST: VllmVersion = VllmVersion::new(0, 6, 4);
    /// First release whose one-group concurrency is `blocks / ⌈L / block_size⌉` (PR #19029).
    pub const CONCURRENCY_FROM_REQUEST_BLOCKS: VllmVersion = VllmVersion::new(0, 9, 1);
    /// First release whose cache-tokens figure is `⌊X × L⌋` (PR #42206).
    pub const TOKENS_FROM_CONCURRENCY: VllmVersion = VllmVersion::new(0, 21, 0);
    /// First release that prints the cache tokens and the concurrency on one line (PR #50462).
    pub const ONE_LINE: VllmVersion = VllmVersion::new(0, 27, 0);
    /// First release whose requests hold two blocks per recurrent group under the defaults
    /// (prefix caching on for hybrid models, vllm-project/vllm#50991).
    pub const ALIGN_STATE_BLOCKS: VllmVersion = VllmVersion::new(0, 28, 0);
    /// The newest release the project has a start-up log of (Qwen3.5 0.8B and 27B under vLLM
    /// 0.28.0, `tests/vllm_observations.rs`).
    pub const NEWEST_LOGGED: VllmVersion = VllmVersion::new(0, 28, 0);
    /// The release the figures follow when none is asked for: [`Self::NEWEST_LOGGED`].
    pub const DEFAULT: VllmVersion = VllmVersion::NEWEST_LOGGED;

    /// Reads `X.Y` or `X.Y.Z` (whole numbers; `X.Y` is `X.Y.0`); `None` for anything else.
    pub fn parse(s: &str) -> Option<VllmVersion> {
        let parts: Vec<&str> = s.trim().split('.').collect();
        if !(2..=3).contains(&parts.len()) {
            return None;
        }
        let mut n = [0u32; 3];
        for (slot, p) in n.iter_mut().zip(&parts) {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            *slot = p.parse().ok()?;
        }
        Some(VllmVersion::new(n[0], n[1], n[2]))
    }

    /// Whether the rules know this release: not newer than the newest logged release's line
    /// (`0.28.x`). Older releases are known (they follow [`Self::OLDEST`]).
    pub fn is_known(self) -> bool {
        (self.major, self.minor) <= (Self::NEWEST_LOGGED.major, Self::NEWEST_LOGGED.minor)
    }

    /// Whether this release is older than the oldest the rules know ([`Self::OLDEST`]).
    pub fn predates_rules(self) -> bool {
        self < Self::OLDEST
    }

    /// The rules this release's figures follow (module docs).
    pub fn rules(self) -> VllmLogRules {
        let v = self.max(Self::OLDEST);
        VllmLogRules {
            version: v,
            concurrency: if v >= Self::CONCURRENCY_FROM_REQUEST_BLOCKS {
                ConcurrencyRule::BlocksOverRequest
            } else {
                ConcurrencyRule::TokensOverLength
            },
            cache_tokens: if v >= Self::TOKENS_FROM_CONCURRENCY {
                CacheTokensRule::ConcurrencyTimesLength
            } else {
                CacheTokensRule::BlocksPerGroup
            },
            one_line: v >= Self::ONE_LINE,
            state_blocks_per_request: if v >= Self::ALIGN_STATE_BLOCKS { 2 } else { 1 },
        }
    }
}

impl Default for VllmVersion {
    fn default() -> Self {
        VllmVersion::DEFAULT
    }
}

impl fmt::Display for VllmVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl From<VllmVersion> for String {
    fn from(v: VllmVersion) -> String {
        v.to_string()
    }
}

impl TryFrom<String> for VllmVersion {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        VllmVersion::parse(&s).ok_or_else(|| format!("not a vLLM version: {s}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_two_or_three_whole_numbers_only() {
        assert_eq!(VllmVersion::parse("0.19"), Some(VllmVersion::new(0, 19, 0)));
        assert_eq!(
            VllmVersion::parse(" 0.19.2 "),
            Some(VllmVersion::new(0, 19, 2))
        );
        for bad in [
            "", "0", "0.19.2.1", "v0.19", "0.x", "0..1", "0.19.", "-1.2", "0.1e1",
        ] {
            assert_eq!(VllmVersion::parse(bad), None, "{bad}");
        }
        assert_eq!(VllmVersion::new(0, 9, 1).to_string(), "0.9.1");
    }

    /// Each boundary switches its one rule, and releases are ordered numerically (0.9 < 0.10).
    #[test]
    fn boundaries_switch_one_rule_each() {
        let r = |s: &str| VllmVersion::parse(s).expect("version").rules();
        assert!(VllmVersion::new(0, 9, 0) < VllmVersion::new(0, 10, 0));
        assert_eq!(r("0.9.0").concurrency, ConcurrencyRule::TokensOverLength);
        assert_eq!(r("0.9.1").concurrency, ConcurrencyRule::BlocksOverRequest);
        assert_eq!(r("0.20.2").cache_tokens, CacheTokensRule::BlocksPerGroup);
        assert_eq!(
            r("0.21").cache_tokens,
            CacheTokensRule::ConcurrencyTimesLength
        );
        assert!(!r("0.26.9").one_line && r("0.27").one_line);
        assert_eq!(r("0.27.1").state_blocks_per_request, 1);
        assert_eq!(r("0.28").state_blocks_per_request, 2);
    }

    #[test]
    fn older_releases_follow_the_oldest_and_newer_lines_are_unknown() {
        let old = VllmVersion::new(0, 5, 2);
        assert!(old.predates_rules() && old.is_known());
        assert_eq!(old.rules().version, VllmVersion::OLDEST);
        assert_eq!(old.rules(), VllmVersion::OLDEST.rules());
        assert!(VllmVersion::new(0, 28, 9).is_known());
        assert!(!VllmVersion::new(0, 29, 0).is_known());
        assert!(!VllmVersion::new(1, 0, 0).is_known());
        assert_eq!(VllmVersion::default(), VllmVersion::NEWEST_LOGGED);
    }

    #[test]
    fn serializes_as_its_text() {
        let v = VllmVersion::new(0, 21, 0);
        let s = serde_json::to_string(&v).expect("json");
        assert_eq!(s, "\"0.21.0\"");
        assert_eq!(serde_json::from_str::<VllmVersion>(&s).expect("back"), v);
        assert!(serde_json::from_str::<VllmVersion>("\"x\"").is_err());
    }
}
