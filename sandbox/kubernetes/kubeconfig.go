package kubernetes

import (
	"context"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// MinTokenLife is the shortest a token the API server issues may last.
const MinTokenLife = 10 * time.Minute

// Kubeconfig is a kubeconfig of ServiceAccount sa in namespace ns of the
// cluster rc reaches, with a token of it that lasts life, and when the
// token expires. rc must be allowed to create the ServiceAccount's tokens
// (the cluster's admin); the kubeconfig it makes holds the ServiceAccount's
// rights alone (deploy/kubernetes gives arena's), in namespace ns.
func Kubeconfig(ctx context.Context, rc *rest.Config, ns, sa string, life time.Duration) ([]byte, time.Time, error) {
	if life < MinTokenLife {
		return nil, time.Time{}, fmt.Errorf("a token lasts at least %s, not %s", MinTokenLife, life)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, time.Time{}, err
	}
	secs := int64(life / time.Second)
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("a token of ServiceAccount %s in namespace %s (apply deploy/kubernetes first, as one who may create its tokens): %w", sa, ns, err)
	}
	ca := rc.CAData
	if len(ca) == 0 && rc.CAFile != "" {
		if ca, err = os.ReadFile(rc.CAFile); err != nil {
			return nil, time.Time{}, fmt.Errorf("the cluster's certificate authority: %w", err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: ca,
		InsecureSkipTLSVerify: rc.Insecure, TLSServerName: rc.ServerName}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts[sa] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: sa, Namespace: ns}
	cfg.CurrentContext = sa
	data, err := clientcmd.Write(*cfg)
	return data, tok.Status.ExpirationTimestamp.Time, err
}
