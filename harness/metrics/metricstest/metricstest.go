// Package metricstest reads metrics as Prometheus does, for tests: the
// text a /metrics endpoint serves, parsed by Prometheus' own parser.
package metricstest

import (
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape reads the metrics served at url; a failure fails the test.
func Scrape(t testing.TB, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", url, res.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("the metrics at %s do not parse: %v", url, err)
	}
	return families
}

// Sampled is the sum of family's samples whose labels include labels
// (name, value, name, value...): a counter's or gauge's value, a
// histogram's count. It is -1 when the family is not there.
func Sampled(families map[string]*dto.MetricFamily, family string, labels ...string) float64 {
	f := families[family]
	if f == nil {
		return -1
	}
	var sum float64
	for _, m := range f.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// hasLabels says whether m carries each name and value of labels.
func hasLabels(m *dto.Metric, labels []string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for i := 0; i+1 < len(labels); i += 2 {
		if have[labels[i]] != labels[i+1] {
			return false
		}
	}
	return true
}
