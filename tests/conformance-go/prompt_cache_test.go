// The provider's prompt cache through the official Go SDKs: openai-go parses
// usage.prompt_tokens_details.cached_tokens in Chat Completions (plain and the streamed
// usage chunk) and usage.input_tokens_details.cached_tokens in Responses;
// anthropic-sdk-go parses cache_creation_input_tokens, cache_read_input_tokens and
// cache_creation in a message and in the stream's message_start and message_delta; five
// breakpoints get Anthropic's own 400. Each prompt starts with a fresh word, so the
// mock's shared cache starts cold for it.
package conformance

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// longPrompt: a fresh word, then `words` words of one token each.
func longPrompt(words int) string {
	return "w" + strconv.FormatInt(time.Now().UnixNano(), 36) + " " + strings.Repeat("rule ", words)
}

func TestPromptCacheOpenAIChat(t *testing.T) {
	ctx := context.Background()
	c := oai(0)
	params := openai.ChatCompletionNewParams{
		Model: "fast",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(longPrompt(1500)), openai.UserMessage("hi")},
	}
	cold, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if cold.Usage.PromptTokensDetails.CachedTokens != 0 {
		t.Fatalf("a cold cache read %d", cold.Usage.PromptTokensDetails.CachedTokens)
	}
	warm, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	cached := warm.Usage.PromptTokensDetails.CachedTokens
	if cached < 1024 || (cached-1024)%128 != 0 || cached > warm.Usage.PromptTokens {
		t.Fatalf("cached_tokens %d of %d", cached, warm.Usage.PromptTokens)
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	var streamed int64 = -1
	for stream.Next() {
		if ch := stream.Current(); ch.JSON.Usage.Valid() && ch.Usage.PromptTokens > 0 {
			streamed = ch.Usage.PromptTokensDetails.CachedTokens
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if streamed != cached {
		t.Fatalf("streamed usage chunk: cached_tokens %d, want %d", streamed, cached)
	}
}

func TestPromptCacheOpenAIResponses(t *testing.T) {
	ctx := context.Background()
	c := oai(0)
	params := responses.ResponseNewParams{
		Model:        "fast",
		Instructions: openai.String(longPrompt(1500)),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	}
	if _, err := c.Responses.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	warm, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := warm.Usage.InputTokensDetails.CachedTokens; got < 1024 || got > warm.Usage.InputTokens {
		t.Fatalf("cached_tokens %d of %d", got, warm.Usage.InputTokens)
	}
}

func TestPromptCacheAnthropic(t *testing.T) {
	ctx := context.Background()
	c := ant(0)
	params := anthropic.MessageNewParams{
		Model: "claude-fast", MaxTokens: 50,
		System: []anthropic.TextBlockParam{{Text: longPrompt(2000),
			CacheControl: anthropic.NewCacheControlEphemeralParam()}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}
	first, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	u := first.Usage
	if u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens <= 2000 ||
		u.CacheCreation.Ephemeral5mInputTokens != u.CacheCreationInputTokens {
		t.Fatalf("a write expected: %+v", u)
	}
	second, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if second.Usage.CacheReadInputTokens != u.CacheCreationInputTokens || second.Usage.CacheCreationInputTokens != 0 {
		t.Fatalf("a read expected: %+v", second.Usage)
	}
	stream := c.Messages.NewStreaming(ctx, params)
	var start anthropic.Usage
	var delta anthropic.MessageDeltaUsage
	for stream.Next() {
		switch ev := stream.Current().AsAny().(type) {
		case anthropic.MessageStartEvent:
			start = ev.Message.Usage
		case anthropic.MessageDeltaEvent:
			delta = ev.Usage
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := second.Usage.CacheReadInputTokens
	if start.CacheReadInputTokens != want || delta.CacheReadInputTokens != want || start.CacheCreation.Ephemeral1hInputTokens != 0 {
		t.Fatalf("message_start %+v, message_delta %+v: cache_read %d expected", start, delta, want)
	}
}

func TestPromptCacheFiveBreakpointsAreAnthropicsOwn400(t *testing.T) {
	block := anthropic.TextBlockParam{Text: "x", CacheControl: anthropic.NewCacheControlEphemeralParam()}
	c := ant(0)
	_, err := c.Messages.New(context.Background(), anthropic.MessageNewParams{
		Model: "claude-fast", MaxTokens: 20, CacheControl: anthropic.NewCacheControlEphemeralParam(),
		System:   []anthropic.TextBlockParam{block, block, block, block},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	var apierr *anthropic.Error
	if !errors.As(err, &apierr) || apierr.StatusCode != 400 {
		t.Fatalf("400 expected, got %v", err)
	}
	if !strings.Contains(apierr.RawJSON(), `"message":"A maximum of 4 blocks with cache_control may be provided. Found 5."`) {
		t.Fatalf("Anthropic's own words expected: %s", apierr.RawJSON())
	}
}
