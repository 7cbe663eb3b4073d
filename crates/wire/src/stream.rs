//! Cutting a [`Reply`] into timed chunks and rendering it, whole or as SSE frames.
//!
//! A stream is a list of frames, one per [`Chunk`]; frame `k` carries every event that
//! belongs at chunk `k`'s moment: the prologue goes with the first delta, the closing
//! events with the last. The mock decides *when* each frame goes; this module decides
//! *what* it holds. Frames are rendered on demand so an open stream holds only the
//! reply and its chunk table, not pre-rendered bytes.

use crate::api::Api;
use crate::dialect::FrameState;
use crate::reply::{At, Chunk, Part, Reply};
use crate::tokens::for_each_token;

/// The whole (non-streaming) JSON body of `reply` in `api`'s format.
pub fn render_json(api: Api, reply: &Reply) -> Vec<u8> {
    serde_json::to_vec(&api.dialect().whole(reply)).expect("a json! value always serializes")
}

/// Renders the frames of one streamed reply.
pub struct StreamRenderer {
    api: Api,
    reply: Reply,
    chunks: Vec<Chunk>,
    /// What the API's frames carry from one to the next.
    state: FrameState,
}

impl StreamRenderer {
    /// `tokens_per_chunk` ≥ 1 output tokens go into each delta event.
    pub fn new(api: Api, reply: Reply, include_usage: bool, tokens_per_chunk: u32) -> Self {
        let chunks = cut(&reply, tokens_per_chunk.max(1));
        StreamRenderer {
            api,
            reply,
            chunks,
            state: FrameState {
                include_usage,
                seq: 0,
            },
        }
    }

    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    pub fn reply(&self) -> &Reply {
        &self.reply
    }

    /// Appends frame `k` (0-based, `k < chunks().len()`) to `out`.
    pub fn frame(&mut self, k: usize, out: &mut Vec<u8>) {
        let chunk = self.chunks[k];
        let n = self.chunks.len();
        let part_text = self.reply.parts[chunk.part as usize].streamed_text();
        let at = At {
            first: k == 0,
            last: k + 1 == n,
            part_start: k == 0 || self.chunks[k - 1].part != chunk.part,
            part_end: k + 1 == n || self.chunks[k + 1].part != chunk.part,
            chunk,
            delta: &part_text[chunk.start as usize..chunk.end as usize],
        };
        self.api
            .dialect()
            .frame(&self.reply, &at, &mut self.state, out)
    }
}

/// Splits every part's streamed text into chunks of `per` tokens; a part with no
/// text still gets one empty chunk so its start and stop events are sent. Hidden
/// reasoning is two chunks: its start at once, its end after all its tokens.
fn cut(reply: &Reply, per: u32) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    for (p, part) in reply.parts.iter().enumerate() {
        if let Part::Hidden { tokens, .. } = part {
            let at = |tokens| Chunk {
                part: p as u16,
                start: 0,
                end: 0,
                tokens,
                thinking: true,
            };
            chunks.push(at(0));
            chunks.push(at((*tokens).min(u16::MAX as u32) as u16));
            continue;
        }
        let thinking = part.is_thought();
        let text = part.streamed_text();
        let before = chunks.len();
        let (mut start, mut tokens) = (0usize, 0u32);
        for_each_token(text, |end| {
            tokens += 1;
            if tokens == per {
                chunks.push(Chunk {
                    part: p as u16,
                    start: start as u32,
                    end: end as u32,
                    tokens: tokens as u16,
                    thinking,
                });
                start = end;
                tokens = 0;
            }
        });
        if tokens > 0 || chunks.len() == before {
            chunks.push(Chunk {
                part: p as u16,
                start: start as u32,
                end: text.len() as u32,
                tokens: tokens as u16,
                thinking,
            });
        }
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{StopReason, ToolCall};

    fn reply(parts: Vec<Part>) -> Reply {
        Reply {
            id: "x".into(),
            model: "m".into(),
            created: 1,
            parts,
            stop: StopReason::EndTurn,
            prompt_tokens: 3,
            output_tokens: 5,
            reasoning_tokens: 0,
            cache: Default::default(),
        }
    }

    #[test]
    fn chunks_cover_every_part_exactly() {
        let r = reply(vec![
            Part::Text("one two three four five".into()),
            Part::ToolCall(ToolCall {
                id: "c".into(),
                name: "f".into(),
                arguments: String::new(),
            }),
        ]);
        let c = cut(&r, 2);
        assert_eq!(c.len(), 4);
        assert_eq!((c[0].start, c[0].end, c[0].tokens), (0, 7, 2));
        assert_eq!((c[2].start, c[2].end, c[2].tokens), (18, 23, 1));
        assert_eq!((c[3].part, c[3].start, c[3].end, c[3].tokens), (1, 0, 0, 0));
    }
}
