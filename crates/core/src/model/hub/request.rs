//! A request to the Hub: a checked model id, the three files fetched for it and their URLs, and
//! what went wrong ([`HubError`], with one sentence in either language).

use crate::base::error::{shorten, Phrase};
use crate::base::i18n::Lang;
use serde::Serialize;
use std::fmt;

/// The longest organisation or repository name the Hub accepts (characters).
pub const NAME_MAX: usize = 96;

/// A model id on the Hub, `ORG/NAME`, checked: ASCII letters, digits, `-`, `_` and `.`, each
/// part 1 to 96 characters, not starting or ending with `-` or `.`, no `--` or `..` (the Hub's
/// own rules, as `huggingface_hub.utils.validate_repo_id` states them). So it can be put in a
/// URL path as it is: it cannot climb out of the path (`..`), name another host, or carry a
/// query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub struct ModelId {
    org: String,
    name: String,
}

impl From<ModelId> for String {
    fn from(id: ModelId) -> String {
        id.to_string()
    }
}

impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.org, self.name)
    }
}

/// Whether one part of an id follows the Hub's rules.
fn valid_part(p: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    !p.is_empty()
        && p.len() <= NAME_MAX
        && p.chars().all(ok_char)
        && !p.starts_with(['-', '.'])
        && !p.ends_with(['-', '.'])
        && !p.contains("--")
        && !p.contains("..")
}

impl ModelId {
    /// Reads `ORG/NAME`, or the model page's address `https://huggingface.co/ORG/NAME` (a
    /// trailing `/` is ignored). A link to any other site is refused ([`HubError::OtherHost`]).
    pub fn parse(s: &str) -> Result<ModelId, HubError> {
        let t = s.trim();
        let bad = || HubError::BadId { given: shorten(t) };
        let t = [
            "https://huggingface.co/",
            "http://huggingface.co/",
            "huggingface.co/",
        ]
        .iter()
        .find_map(|p| t.strip_prefix(p))
        .unwrap_or(t);
        if t.contains("://") || t.starts_with("//") || t.starts_with("www.") {
            return Err(HubError::OtherHost {
                given: shorten(s.trim()),
            });
        }
        let t = t.strip_suffix('/').unwrap_or(t);
        let (org, name) = t.split_once('/').ok_or_else(bad)?;
        if !valid_part(org) || !valid_part(name) || name.ends_with(".git") {
            return Err(bad());
        }
        Ok(ModelId {
            org: org.to_string(),
            name: name.to_string(),
        })
    }
}

/// One of the three things fetched for a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HubFile {
    /// `config.json`.
    Config,
    /// The model API's answer (`/api/models/ORG/NAME`).
    Api,
    /// `model.safetensors.index.json` (only sharded checkpoints have one).
    Index,
}

impl HubFile {
    /// The path after the base, starting with `/`.
    pub fn path(self, id: &ModelId) -> String {
        match self {
            HubFile::Config => format!("/{id}/resolve/main/config.json"),
            HubFile::Index => format!("/{id}/resolve/main/model.safetensors.index.json"),
            HubFile::Api => format!("/api/models/{id}"),
        }
    }

    /// The full URL under `base` (`https://huggingface.co`, or a test's stub).
    pub fn url(self, base: &str, id: &ModelId) -> String {
        format!("{}{}", base.trim_end_matches('/'), self.path(id))
    }

    /// The largest answer read (bytes): a config is a few KB (2 MiB, as a dropped file); the
    /// API's answer lists the repository's files (4 MiB); an index lists every tensor, about
    /// 10 MB for the largest models (16 MiB).
    pub const fn limit_bytes(self) -> usize {
        match self {
            HubFile::Config => 2 << 20,
            HubFile::Api => 4 << 20,
            HubFile::Index => 16 << 20,
        }
    }

    /// The file's name as sentences show it.
    pub const fn label(self) -> &'static str {
        match self {
            HubFile::Config => "config.json",
            HubFile::Api => "api/models",
            HubFile::Index => "model.safetensors.index.json",
        }
    }
}

/// What went wrong fetching from the Hub; each has one sentence in either language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubError {
    /// Not a model id.
    BadId {
        /// What was typed (shortened).
        given: String,
    },
    /// A link to a site other than huggingface.co.
    OtherHost {
        /// What was typed (shortened).
        given: String,
    },
    /// `HF_ENDPOINT` is not an http(s) address.
    BadEndpoint {
        /// Its value (shortened).
        given: String,
    },
    /// 401 or 403: a gated or private model.
    Gated {
        /// The model.
        id: String,
    },
    /// 404: no such model (or no such file).
    Missing {
        /// The model.
        id: String,
        /// The file asked for.
        file: HubFile,
    },
    /// Any other HTTP status.
    Status {
        /// The file asked for.
        file: HubFile,
        /// The status code.
        code: u16,
    },
    /// The Hub could not be reached (offline, DNS, refused, blocked).
    Offline {
        /// The client's reason, as it gave it (may be empty).
        detail: String,
    },
    /// No answer within the time limit.
    Timeout {
        /// The limit, seconds.
        seconds: u64,
    },
    /// The answer is larger than [`HubFile::limit_bytes`].
    TooLarge {
        /// The file asked for.
        file: HubFile,
        /// The limit, bytes.
        limit_bytes: usize,
    },
    /// The answer is not what the file should be (not JSON, not a config).
    Malformed {
        /// The file asked for.
        file: HubFile,
        /// Why: the parser's sentence, or what the answer is instead.
        detail: Phrase,
    },
}

impl HubError {
    /// The sentence, as a phrase of the translation table.
    pub fn phrase(&self) -> Phrase {
        match self {
            HubError::BadId { given } => Phrase::tr("phr_hub_bad_id").val("given", given),
            HubError::OtherHost { given } => Phrase::tr("phr_hub_other_host").val("given", given),
            HubError::BadEndpoint { given } => {
                Phrase::tr("phr_hub_bad_endpoint").val("given", given)
            }
            HubError::Gated { id } => Phrase::tr("phr_hub_gated").val("id", id),
            HubError::Missing { id, file } => Phrase::tr("phr_hub_missing")
                .val("id", id)
                .val("file", file.label()),
            HubError::Status { file, code } => Phrase::tr("phr_hub_status")
                .val("file", file.label())
                .val("code", code),
            HubError::Offline { detail } => {
                let d = if detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", shorten(detail))
                };
                Phrase::tr("phr_hub_offline").val("detail", d)
            }
            HubError::Timeout { seconds } => Phrase::tr("phr_hub_timeout").val("s", seconds),
            HubError::TooLarge { file, limit_bytes } => Phrase::tr("phr_hub_too_large")
                .val("file", file.label())
                .val("limit", crate::base::derivation::group(*limit_bytes as u64)),
            HubError::Malformed { file, detail } => Phrase::tr("phr_hub_malformed")
                .val("file", file.label())
                .sub("detail", detail.clone()),
        }
    }

    /// The sentence in `lang`.
    pub fn message(&self, lang: Lang) -> String {
        self.phrase().text(lang)
    }

    /// A stable name for scripts (the CLI's JSON `hub_error_kind`, the page's `data-kind`).
    pub const fn kind(&self) -> &'static str {
        match self {
            HubError::BadId { .. } | HubError::OtherHost { .. } => "bad_id",
            HubError::BadEndpoint { .. } => "bad_endpoint",
            HubError::Gated { .. } => "gated",
            HubError::Missing { .. } => "missing",
            HubError::Status { .. } => "status",
            HubError::Offline { .. } => "offline",
            HubError::Timeout { .. } => "timeout",
            HubError::TooLarge { .. } => "too_large",
            HubError::Malformed { .. } => "malformed",
        }
    }
}

impl fmt::Display for HubError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(Lang::En))
    }
}

impl std::error::Error for HubError {}

#[cfg(test)]
mod tests {
    use super::super::endpoint::HUB_ORIGIN;
    use super::super::test_support::id;
    use super::*;
    use crate::base::error::Phrase;
    use crate::base::i18n::Lang;

    #[test]
    fn model_ids_follow_the_hubs_rules() {
        for ok in [
            "meta-llama/Llama-2-7b-hf",
            "Qwen/Qwen2.5-7B-Instruct",
            "a/b",
            "org_1/x.y_z-2",
            " google/gemma-3-4b-it ",
            "https://huggingface.co/Qwen/Qwen3-8B",
            "https://huggingface.co/Qwen/Qwen3-8B/",
            "huggingface.co/Qwen/Qwen3-8B",
        ] {
            let m = id(ok);
            let text = m.to_string();
            assert_eq!(text.matches('/').count(), 1, "{ok}");
            assert!(ok.contains(&text), "{ok} → {text}");
        }
        let long = "a".repeat(NAME_MAX + 1);
        for bad in [
            "",
            "gpt2",
            "/name",
            "org/",
            "../etc/passwd",
            "org/..",
            "org/a..b",
            "org/a--b",
            "-org/name",
            "org/name.",
            "org/name.git",
            "org/name/tree/main",
            "org/na me",
            "org/name?x=1",
            "org/name#x",
            "org/%2e%2e",
            "org\\name",
            "조직/모델",
            &format!("org/{long}"),
        ] {
            assert_eq!(
                ModelId::parse(bad).map_err(|e| e.kind()),
                Err("bad_id"),
                "{bad}"
            );
        }
        for other in [
            "https://evil.example/org/name",
            "http://127.0.0.1:9/org/name",
            "//evil.example/org/name",
            "https://hf.co/org/name",
            "www.example.com/a",
        ] {
            assert!(
                matches!(ModelId::parse(other), Err(HubError::OtherHost { .. })),
                "{other}"
            );
        }
        assert_eq!(
            id(&format!("org/{}", "a".repeat(NAME_MAX))).name.len(),
            NAME_MAX
        );
    }

    #[test]
    fn urls_follow_the_hubs_layout() {
        let m = id("meta-llama/Llama-2-7b-hf");
        let expect = [
            (HubFile::Config, "https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/config.json"),
            (HubFile::Index, "https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/model.safetensors.index.json"),
            (HubFile::Api, "https://huggingface.co/api/models/meta-llama/Llama-2-7b-hf"),
        ];
        for (f, url) in expect {
            assert_eq!(f.url(HUB_ORIGIN, &m), url);
            // A stub's base with or without a trailing slash gives the same path.
            let stub = f.url("http://127.0.0.1:8080/", &m);
            assert_eq!(
                stub.strip_prefix("http://127.0.0.1:8080"),
                url.strip_prefix(HUB_ORIGIN)
            );
        }
    }

    #[test]
    fn every_error_has_both_sentences_filled() {
        let errors = [
            HubError::BadId { given: "x".into() },
            HubError::OtherHost { given: "x".into() },
            HubError::BadEndpoint { given: "x".into() },
            HubError::Gated { id: "o/n".into() },
            HubError::Missing {
                id: "o/n".into(),
                file: HubFile::Config,
            },
            HubError::Status {
                file: HubFile::Api,
                code: 503,
            },
            HubError::Offline {
                detail: "dns".into(),
            },
            HubError::Offline {
                detail: String::new(),
            },
            HubError::Timeout { seconds: 20 },
            HubError::TooLarge {
                file: HubFile::Index,
                limit_bytes: 16 << 20,
            },
            HubError::Malformed {
                file: HubFile::Config,
                detail: Phrase::tr("phr_hub_not_a_config"),
            },
        ];
        for e in &errors {
            for lang in Lang::ALL {
                let t = e.message(*lang);
                assert!(!t.contains('{') && !t.contains("⟨missing"), "{e:?}: {t}");
            }
            assert_ne!(e.message(Lang::En), e.message(Lang::Ko), "{e:?}");
        }
    }
}
