// The manifests `plimsoll k8s` renders, read the way the API server reads them: each
// document decoded strictly (an unknown or misspelt field is an error) into the official
// Kubernetes API types (k8s.io/api), names checked by apimachinery's validation, and
// the parts a sharded run depends on checked by value.
package k8s

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func plimsoll(t *testing.T) string {
	if p := os.Getenv("PLIMSOLL_BIN"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../target/release/plimsoll")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no plimsoll binary at %s (build with cargo build --release, or set PLIMSOLL_BIN)", p)
	}
	return p
}

func render(t *testing.T, args ...string) []string {
	return renderConfig(t, "../../examples/floor/plimsoll.toml", args...)
}

func renderConfig(t *testing.T, config string, args ...string) []string {
	cmd := exec.Command(plimsoll(t), append([]string{"k8s", "--config", config}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("plimsoll k8s: %v\n%s", err, errb.String())
	}
	var docs []string
	for _, d := range strings.Split(out.String(), "\n---\n")[1:] {
		docs = append(docs, d)
	}
	return docs
}

func strict(t *testing.T, doc string, into any) {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("not a valid object: %v\n%s", err, doc)
	}
}

func checkName(t *testing.T, m metav1.ObjectMeta) {
	if errs := validation.IsDNS1123Subdomain(m.Name); len(errs) > 0 {
		t.Errorf("name %q: %v", m.Name, errs)
	}
	for k, v := range m.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			t.Errorf("label key %q: %v", k, errs)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("label %q=%q: %v", k, v, errs)
		}
	}
}

func TestManifestsAreValidKubernetesObjects(t *testing.T) {
	docs := render(t, "--shards", "4", "--target", "http://agent.default.svc:8080",
		"--image", "registry.example/plimsoll:test", "--run-id", "r-test", "-c", "400",
		"--prometheus", "--otlp", "http://otel-collector.monitoring:4318", "--env-secret", "livekit-keys")
	if len(docs) != 5 {
		t.Fatalf("want 5 documents (ConfigMap, Deployment, Service, two Jobs), got %d", len(docs))
	}
	var kinds []string
	var drivers, merge *batchv1.Job
	var mock *appsv1.Deployment
	var svc *corev1.Service
	var cm *corev1.ConfigMap
	for _, d := range docs {
		var tm metav1.TypeMeta
		if err := json.Unmarshal([]byte(d), &tm); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, tm.Kind)
		switch tm.Kind {
		case "ConfigMap":
			cm = &corev1.ConfigMap{}
			strict(t, d, cm)
			checkName(t, cm.ObjectMeta)
		case "Deployment":
			mock = &appsv1.Deployment{}
			strict(t, d, mock)
			checkName(t, mock.ObjectMeta)
		case "Service":
			svc = &corev1.Service{}
			strict(t, d, svc)
			checkName(t, svc.ObjectMeta)
		case "Job":
			j := &batchv1.Job{}
			strict(t, d, j)
			checkName(t, j.ObjectMeta)
			if j.Spec.CompletionMode != nil {
				drivers = j
			} else {
				merge = j
			}
		default:
			t.Fatalf("unexpected kind %q", tm.Kind)
		}
	}
	if drivers == nil || merge == nil || mock == nil || svc == nil || cm == nil {
		t.Fatalf("kinds %v", kinds)
	}
	js := drivers.Spec
	if *js.CompletionMode != batchv1.IndexedCompletion || *js.Completions != 4 || *js.Parallelism != 4 {
		t.Errorf("drivers: want an Indexed Job of 4 completions, 4 at once")
	}
	if *js.BackoffLimit != 0 || js.PodReplacementPolicy == nil || *js.PodReplacementPolicy != batchv1.Failed {
		t.Errorf("drivers: a failed shard must not run again (backoffLimit 0, podReplacementPolicy Failed)")
	}
	if js.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("drivers: restartPolicy %q", js.Template.Spec.RestartPolicy)
	}
	c := js.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["PLIMSOLL_SHARDS"] != "4" || env["PLIMSOLL_RUN_ID"] != "r-test" || env["PLIMSOLL_TARGET"] != "http://agent.default.svc:8080" {
		t.Errorf("drivers: env %v", env)
	}
	if env["PLIMSOLL_MOCK"] != "http://"+svc.Name+":8700" {
		t.Errorf("drivers reach the mock at %q, the Service is %q", env["PLIMSOLL_MOCK"], svc.Name)
	}
	// A Secret's keys (a LiveKit server's key pair) are the drivers' environment.
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "livekit-keys" {
		t.Errorf("drivers: envFrom %v", c.EnvFrom)
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"run", "--barrier", "--upload", "--concurrency 400", "--session /experiment/session.toml"} {
		if !strings.Contains(args, want) {
			t.Errorf("drivers: args %q lack %q", args, want)
		}
	}
	// Watched live: each pod pushes to the collector and serves /metrics for a scrape.
	for _, want := range []string{"--otlp http://otel-collector.monitoring:4318", "--live 0.0.0.0:9466"} {
		if !strings.Contains(args, want) {
			t.Errorf("drivers: args %q lack %q", args, want)
		}
	}
	ann := js.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != "9466" || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("drivers: pod annotations %v", ann)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9466 || c.Ports[0].Name != "metrics" {
		t.Errorf("drivers: ports %v", c.Ports)
	}
	for k, v := range svc.Spec.Selector {
		if mock.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, the mock's pods are labelled %v", k, v, mock.Spec.Template.Labels)
		}
	}
	for _, f := range []string{"plimsoll.toml", "session.toml", "scenario.toml"} {
		if cm.Data[f] == "" {
			t.Errorf("the ConfigMap lacks %s", f)
		}
	}
	margs := strings.Join(merge.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(margs, "merge --from http://"+svc.Name+":8700 --run-id r-test") {
		t.Errorf("merge args %q", margs)
	}
}

// A step of calls (the Pipecat example's Twilio bot) renders the same valid objects, its
// session file (protocol = "twilio") in the ConfigMap the drivers read.
func TestACallsStepRendersValidObjects(t *testing.T) {
	docs := renderConfig(t, "../../examples/pipecat-voice/plimsoll.toml", "--shards", "2",
		"--target", "http://bot.default.svc:8765", "--run-id", "r-calls", "-c", "8", "--env-secret", "bot-keys")
	if len(docs) != 5 {
		t.Fatalf("want 5 documents, got %d", len(docs))
	}
	for _, d := range docs {
		var tm metav1.TypeMeta
		if err := json.Unmarshal([]byte(d), &tm); err != nil {
			t.Fatal(err)
		}
		switch tm.Kind {
		case "ConfigMap":
			cm := &corev1.ConfigMap{}
			strict(t, d, cm)
			if !strings.Contains(cm.Data["session.toml"], `protocol = "twilio"`) {
				t.Errorf("the ConfigMap's session file is not the calls': %q", cm.Data["session.toml"])
			}
		case "Deployment":
			strict(t, d, &appsv1.Deployment{})
		case "Service":
			strict(t, d, &corev1.Service{})
		case "Job":
			strict(t, d, &batchv1.Job{})
		default:
			t.Fatalf("unexpected kind %q", tm.Kind)
		}
	}
}

func TestBadRunNamesAreRefused(t *testing.T) {
	cmd := exec.Command(plimsoll(t), "k8s", "--config", "../../examples/floor/plimsoll.toml", "--shards", "2",
		"--target", "http://a:1", "--image", "i", "--run-id", "Run_1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Kubernetes names") {
		t.Fatalf("want a refusal naming the rule, got %v: %s", err, out)
	}
}
