package kubernetes

import (
	"os"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/probe"
)

// The doctor asks for exactly the rights deploy/kubernetes's Role grants:
// a right the backend needs and the Role lacks, or one the Role grants
// that nothing asks for, fails.
func TestTheDoctorAsksForTheRightsTheRoleGrants(t *testing.T) {
	data, err := os.ReadFile("../../deploy/kubernetes/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var granted []string
	for _, doc := range strings.Split(string(data), "\n---") {
		var role rbacv1.Role
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatal(err)
		}
		if role.Kind != "Role" {
			continue
		}
		for _, r := range role.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						granted = append(granted, g+" "+res+" "+v)
					}
				}
			}
		}
	}
	var asked []string
	for _, r := range rights {
		res := r.resource
		if r.sub != "" {
			res += "/" + r.sub
		}
		asked = append(asked, r.group+" "+res+" "+r.verb)
	}
	// What only the doctor reads, with a warning when it may not.
	asked = append(asked, "networking.k8s.io networkpolicies get", "networking.k8s.io networkpolicies list")
	slices.Sort(granted)
	slices.Sort(asked)
	if !slices.Equal(granted, asked) {
		t.Errorf("the Role grants\n%s\nthe doctor asks\n%s", strings.Join(granted, "\n"), strings.Join(asked, "\n"))
	}
}

func TestWhichNetworkPolicyDeniesTheBoxes(t *testing.T) {
	labels := podFor(Place{Namespace: "arena", Image: "x", Owner: "o"}, "p", sandbox.DefaultLimits(), 0, nil).Labels
	both := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	sel := func(kv ...string) metav1.LabelSelector {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return metav1.LabelSelector{MatchLabels: m}
	}
	for _, c := range []struct {
		name  string
		spec  networkingv1.NetworkPolicySpec
		wants bool
	}{
		{"deploy/kubernetes's", networkingv1.NetworkPolicySpec{PodSelector: sel(LabelManaged, "arena"), PolicyTypes: both}, true},
		{"every pod of the namespace", networkingv1.NetworkPolicySpec{PodSelector: sel(), PolicyTypes: both}, true},
		{"ingress only", networkingv1.NetworkPolicySpec{PodSelector: sel(), PolicyTypes: both[:1]}, false},
		{"other pods", networkingv1.NetworkPolicySpec{PodSelector: sel("app", "web"), PolicyTypes: both}, false},
		{"egress allowed somewhere", networkingv1.NetworkPolicySpec{PodSelector: sel(), PolicyTypes: both, Egress: []networkingv1.NetworkPolicyEgressRule{{}}}, false},
		{"ingress allowed from somewhere", networkingv1.NetworkPolicySpec{PodSelector: sel(), PolicyTypes: both, Ingress: []networkingv1.NetworkPolicyIngressRule{{}}}, false},
	} {
		if got := denies(networkingv1.NetworkPolicy{Spec: c.spec}, labels); got != c.wants {
			t.Errorf("%s: denies = %v, want %v", c.name, got, c.wants)
		}
	}
}

func TestAPodsLimitsAreJudgedFromInside(t *testing.T) {
	lim := probe.ProbeLimits()
	good := probe.Facts{"mem": "268435456", "nproc": "64", "kernel": "Linux version 6.1"}
	if _, bad := expect(good, lim); len(bad) != 0 {
		t.Errorf("the limits asked were judged wrong: %v", bad)
	}
	for k, v := range map[string]string{"mem": "9223372036854771712", "nproc": "unlimited"} {
		f := probe.Facts{"mem": good["mem"], "nproc": good["nproc"]}
		f[k] = v
		if _, bad := expect(f, lim); len(bad) != 1 {
			t.Errorf("%s=%s: judged %v, want one fault", k, v, bad)
		}
	}
}
