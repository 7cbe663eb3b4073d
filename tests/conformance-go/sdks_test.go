// The official Go SDKs against `plimsoll mock`: openai-go (Chat Completions plain,
// streamed and with a tool round trip; Responses; errors; retries timed by
// retry-after) and anthropic-sdk-go (Messages plain and streamed, a tool round trip
// with signed thinking, errors, retries of 529).
package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

const scenario = `
unknown_model = "error"
[defaults]
ttft_ms = 10
tok_ms = 1
output_tokens = 12
[models."fast"]
[models."claude-fast"]
[models."think"]
reasoning = { tokens = 20 }
[models."limited"]
[[models."limited".fail]]
attempts = 2
with = "rate_limit"
[models."limited".failures]
retry_after_ms = 300
[models."busy"]
[[models."busy".fail]]
attempts = 2
with = "overloaded"
[models."busy".failures]
retry_after_ms = 200
`

var base string

func TestMain(m *testing.M) {
	bin := os.Getenv("PLIMSOLL_BIN")
	if bin == "" {
		bin, _ = filepath.Abs("../../target/release/plimsoll")
	}
	dir, err := os.MkdirTemp("", "plimsoll-go-")
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "scenario.toml")
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		panic(err)
	}
	cmd := exec.Command(bin, "mock", "--listen", "127.0.0.1:0", "--scenario", path, "--seed", "1")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "listening http://") {
		panic("mock did not start: " + line)
	}
	base = strings.TrimSpace(strings.TrimPrefix(line, "listening "))
	code := m.Run()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func marked(session string) string {
	return "[[plimsoll session=" + session + " nonce=psn0000000000000000 turn=1]] hello"
}

// session reads one session's figures from the mock's ledger.
func session(t *testing.T, name string) map[string]any {
	t.Helper()
	resp, err := http.Get(base + "/plimsoll/ledger")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct {
		Sessions map[string]map[string]any `json:"sessions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	return l.Sessions[name]
}

func oai(retries int) openai.Client {
	return openai.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(retries))
}

func ant(retries int) anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey("k"), aoption.WithMaxRetries(retries))
}

func TestOpenAIChat(t *testing.T) {
	ctx := context.Background()
	c := oai(0)
	r, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "fast",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(marked("go-chat"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := tokens(r.Choices[0].Message.Content); n != 12 || r.Usage.CompletionTokens != 12 {
		t.Fatalf("12 words and tokens expected, got %d words, %d tokens", n, r.Usage.CompletionTokens)
	}
	stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         "fast",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(marked("go-stream"))},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if n := tokens(acc.Choices[0].Message.Content); n != 12 || acc.Usage.CompletionTokens != 12 {
		t.Fatalf("streamed: %d words, usage %d", n, acc.Usage.CompletionTokens)
	}
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "lookup",
		Parameters: shared.FunctionParameters{"type": "object",
			"properties": map[string]any{"key": map[string]any{"type": "string"}}, "required": []string{"key"}},
	})}
	params := openai.ChatCompletionNewParams{
		Model:    "fast",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(marked("go-tools"))},
		Tools:    tools,
	}
	first, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	calls := first.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "lookup" {
		t.Fatalf("one lookup call expected: %+v", calls)
	}
	params.Messages = append(params.Messages, first.Choices[0].Message.ToParam(), openai.ToolMessage("42", calls[0].ID))
	second, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if second.Choices[0].FinishReason != "stop" {
		t.Fatalf("a text answer after the tool result, got %q", second.Choices[0].FinishReason)
	}
	if v := session(t, "go-tools")["integrity_violations"]; v != 0.0 {
		t.Fatalf("violations: %v", v)
	}
	think, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:           "think",
		ReasoningEffort: shared.ReasoningEffortMedium,
		Messages:        []openai.ChatCompletionMessageParamUnion{openai.UserMessage(marked("go-think"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if think.Usage.CompletionTokensDetails.ReasoningTokens != 20 {
		t.Fatalf("reasoning tokens: %d", think.Usage.CompletionTokensDetails.ReasoningTokens)
	}
}

func TestOpenAIResponses(t *testing.T) {
	c := oai(0)
	r, err := c.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "fast",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(marked("go-resp"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := tokens(r.OutputText()); n != 12 || r.Usage.OutputTokens != 12 {
		t.Fatalf("%d words, usage %d", n, r.Usage.OutputTokens)
	}
}

func TestOpenAIErrorsAndRetries(t *testing.T) {
	ctx := context.Background()
	plain, retrying := oai(0), oai(2)
	_, err := plain.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "nope", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
	var apierr *openai.Error
	if !errors.As(err, &apierr) || apierr.StatusCode != 404 {
		t.Fatalf("404 *openai.Error expected, got %v", err)
	}
	_, err = plain.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "limited", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(marked("go-429"))}})
	if !errors.As(err, &apierr) || apierr.StatusCode != 429 {
		t.Fatalf("429 expected, got %v", err)
	}
	t0 := time.Now()
	_, err = retrying.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "limited", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(marked("go-retry"))}})
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(t0); waited < 550*time.Millisecond {
		t.Fatalf("retry-after-ms 300 twice, waited %v", waited)
	}
	if s := session(t, "go-retry"); s["llm_calls"] != 3.0 || s["attempts_per_call"] != 3.0 {
		t.Fatalf("3 attempts expected: %v", s)
	}
}

func TestAnthropic(t *testing.T) {
	ctx := context.Background()
	c := ant(0)
	msg, err := c.Messages.New(ctx, anthropic.MessageNewParams{
		Model: "claude-fast", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(marked("go-a")))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Usage.OutputTokens != 12 || msg.Content[0].Type != "text" {
		t.Fatalf("unexpected: %+v", msg)
	}
	tools := []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
		Name: "lookup",
		InputSchema: anthropic.ToolInputSchemaParam{
			Properties: map[string]any{"key": map[string]any{"type": "string"}}, Required: []string{"key"}},
	}}}
	params := anthropic.MessageNewParams{
		Model: "think", MaxTokens: 2048, Tools: tools,
		Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(marked("go-a-tools")))},
	}
	stream := c.Messages.NewStreaming(ctx, params)
	first := anthropic.Message{}
	for stream.Next() {
		if err := first.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(first.Content) != 2 || first.Content[0].Type != "thinking" || first.Content[1].Type != "tool_use" {
		t.Fatalf("thinking then tool_use expected: %+v", first.Content)
	}
	if len(first.Content[0].Signature) < 60 {
		t.Fatalf("a signature expected, got %q", first.Content[0].Signature)
	}
	params.Messages = append(params.Messages, first.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(first.Content[1].ID, "42", false)))
	second, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if second.StopReason != "end_turn" {
		t.Fatalf("end_turn expected, got %q", second.StopReason)
	}
	if v := session(t, "go-a-tools")["integrity_violations"]; v != 0.0 {
		t.Fatalf("violations: %v", v)
	}
	_, err = c.Messages.New(ctx, anthropic.MessageNewParams{Model: "busy", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(marked("go-a-529")))}})
	var apierr *anthropic.Error
	if !errors.As(err, &apierr) || apierr.StatusCode != 529 {
		t.Fatalf("529 expected, got %v", err)
	}
	t0 := time.Now()
	again := ant(2)
	_, err = again.Messages.New(ctx, anthropic.MessageNewParams{Model: "busy", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(marked("go-a-retry")))}})
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(t0); waited < 350*time.Millisecond {
		t.Fatalf("retry-after 200 ms twice, waited %v", waited)
	}
	if s := session(t, "go-a-retry"); s["attempts_per_call"] != 3.0 {
		t.Fatalf("3 attempts expected: %v", s)
	}
}

// tokens counts by the mock's rule: each word is one, and so is each sentence's full stop
// (its replies are sentences, as a model writes them).
func tokens(text string) int {
	n := 0
	for _, w := range strings.Fields(text) {
		n += strings.Count(w, ".")
		if strings.Trim(w, ".") != "" {
			n++
		}
	}
	return n
}
