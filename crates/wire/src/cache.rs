//! The provider's prompt cache as each API states it: what a request asks of it (the
//! breakpoints an Anthropic client marks with `cache_control`, OpenAI's
//! `prompt_cache_key` and retention), what a reply says it did (tokens read from the
//! cache and written to it, by lifetime), and the rules an API caches by (explicit
//! breakpoints or an automatic prefix, the least it caches, the steps it caches in).
//!
//! Which prefix is in the cache, and for how long, is the mock's business (its
//! `cache/` folder); this module holds only the API's words for it.

/// How long an entry lives after its last use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ttl {
    /// Anthropic's default `5m`.
    FiveMinutes,
    /// Anthropic's `ttl: "1h"`.
    OneHour,
}

impl Ttl {
    pub fn ms(self) -> u64 {
        match self {
            Ttl::FiveMinutes => 300_000,
            Ttl::OneHour => 3_600_000,
        }
    }
}

/// Where a breakpoint sits in the normalized request: a tool, the system prompt or a
/// message, up to byte `end` of its text (`usize::MAX`: the whole of it, tool calls
/// and all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spot {
    Tool(usize),
    System { end: usize },
    Message { index: usize, end: usize },
}

/// One `cache_control` breakpoint: the prefix up to and including its block is cached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Breakpoint {
    pub at: Spot,
    pub ttl: Ttl,
}

/// What a request asks of the prompt cache.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheAsk {
    /// Anthropic `cache_control` on tools, system and content blocks, in request order.
    pub breakpoints: Vec<Breakpoint>,
    /// Anthropic's top-level `cache_control`: a breakpoint on the last cacheable block.
    pub automatic: Option<Ttl>,
    /// OpenAI `prompt_cache_key`: requests share cached prefixes only under one key.
    pub key: Option<String>,
    /// OpenAI `prompt_cache_retention: "24h"` (extended retention).
    pub extended: bool,
}

impl CacheAsk {
    /// The breakpoints in force: the marked ones, and the automatic one at the end.
    pub fn all_breakpoints(&self) -> Vec<Breakpoint> {
        let mut out = self.breakpoints.clone();
        if let Some(ttl) = self.automatic {
            out.push(Breakpoint {
                at: Spot::Message {
                    index: usize::MAX,
                    end: usize::MAX,
                },
                ttl,
            });
        }
        out
    }
}

/// What the cache did for one reply, as its usage reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheUsage {
    /// Prompt tokens read from the cache (OpenAI `cached_tokens`, Anthropic
    /// `cache_read_input_tokens`, Gemini `cachedContentTokenCount`).
    pub read: u32,
    /// Prompt tokens written with a 5-minute and a 1-hour lifetime (Anthropic
    /// `cache_creation`; OpenAI and Gemini write without saying so).
    pub write_5m: u32,
    pub write_1h: u32,
}

impl CacheUsage {
    pub fn written(&self) -> u32 {
        self.write_5m + self.write_1h
    }
}

/// Where an automatic cache may end a cached prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steps {
    /// At `first` tokens, then every `every` tokens (OpenAI: 1024, then 128).
    Tokens { first: u32, every: u32 },
    /// At the end of any tool, system prompt or message (Gemini's contents).
    Blocks,
    /// Only at the client's breakpoints (Anthropic), looking back this many blocks
    /// from each for an entry an earlier request wrote.
    Breakpoints { lookback: usize },
}

/// How an API caches prompts for one model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheRules {
    pub steps: Steps,
    /// The shortest prefix it caches, in tokens.
    pub min_tokens: u32,
    /// Entries live this long after their last use (when the request names no ttl).
    pub ttl_ms: u64,
    /// At most this many breakpoints in a request (Anthropic: 4).
    pub max_breakpoints: usize,
}

impl CacheRules {
    /// OpenAI's automatic prefix cache: prompts of 1024 tokens and more, in steps of 128;
    /// in-memory retention of 5 to 10 minutes of inactivity (the mock keeps 5).
    pub const OPENAI: CacheRules = CacheRules {
        steps: Steps::Tokens {
            first: 1024,
            every: 128,
        },
        min_tokens: 1024,
        ttl_ms: 300_000,
        max_breakpoints: 0,
    };

    /// The most of a `tokens`-token prefix this cache can hold.
    pub fn cacheable(&self, tokens: u32) -> u32 {
        if tokens < self.min_tokens {
            return 0;
        }
        match self.steps {
            Steps::Tokens { first, every } => first + (tokens - first) / every.max(1) * every,
            Steps::Blocks | Steps::Breakpoints { .. } => tokens,
        }
    }
}

/// Anthropic's refusal of a request with more breakpoints than it takes, in its words.
pub fn too_many_breakpoints(found: usize) -> crate::WireError {
    crate::WireError::verbatim(
        None,
        format!("A maximum of 4 blocks with cache_control may be provided. Found {found}."),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_caches_from_1024_tokens_in_steps_of_128() {
        let r = CacheRules::OPENAI;
        assert_eq!(r.cacheable(1023), 0);
        assert_eq!(r.cacheable(1024), 1024);
        assert_eq!(r.cacheable(1151), 1024);
        assert_eq!(r.cacheable(1152), 1152);
        assert_eq!(r.cacheable(5000), 4992);
        let blocks = CacheRules {
            steps: Steps::Blocks,
            min_tokens: 2048,
            ..r
        };
        assert_eq!((blocks.cacheable(2047), blocks.cacheable(2050)), (0, 2050));
    }
}
