package kubescale

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// typedClient is what client-go's typed client of one resource in a
// namespace does that a run needs.
type typedClient[T runtime.Object, L runtime.Object] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// resourceCalls is the calls a run makes on one resource of its namespace.
type resourceCalls struct {
	create func(ctx context.Context, name string, now time.Time) error
	get    func(ctx context.Context, name string) error
	// list returns one page: the names on it and the continue token.
	list   func(ctx context.Context, opts metav1.ListOptions) (names []string, cont string, err error)
	delete func(ctx context.Context, name string, opts metav1.DeleteOptions) error
	watch  func(ctx context.Context) (watch.Interface, error)
}

func typed[T runtime.Object, L runtime.Object](c typedClient[T, L], build func(name string, now time.Time) T) resourceCalls {
	return resourceCalls{
		create: func(ctx context.Context, name string, now time.Time) error {
			_, err := c.Create(ctx, build(name, now), metav1.CreateOptions{})
			return err
		},
		get: func(ctx context.Context, name string) error {
			_, err := c.Get(ctx, name, metav1.GetOptions{})
			return err
		},
		list: func(ctx context.Context, opts metav1.ListOptions) ([]string, string, error) {
			l, err := c.List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			items, err := apimeta.ExtractList(l)
			if err != nil {
				return nil, "", err
			}
			var names []string
			for _, it := range items {
				if m, err := apimeta.Accessor(it); err == nil {
					names = append(names, m.GetName())
				}
			}
			lm, err := apimeta.ListAccessor(l)
			if err != nil {
				return nil, "", err
			}
			return names, lm.GetContinue(), nil
		},
		delete: func(ctx context.Context, name string, opts metav1.DeleteOptions) error {
			return c.Delete(ctx, name, opts)
		},
		watch: func(ctx context.Context) (watch.Interface, error) { return c.Watch(ctx, metav1.ListOptions{}) },
	}
}

// resources are the calls of every resource a run can grow, in
// namespace ns.
func resources(cs *kubernetes.Clientset, ns string) map[string]resourceCalls {
	return map[string]resourceCalls{
		"pods":       typed(cs.CoreV1().Pods(ns), func(n string, _ time.Time) *corev1.Pod { return newPod(ns, n) }),
		"services":   typed(cs.CoreV1().Services(ns), func(n string, _ time.Time) *corev1.Service { return newService(ns, n) }),
		"configmaps": typed(cs.CoreV1().ConfigMaps(ns), func(n string, _ time.Time) *corev1.ConfigMap { return newConfigMap(ns, n) }),
		"secrets":    typed(cs.CoreV1().Secrets(ns), func(n string, _ time.Time) *corev1.Secret { return newSecret(ns, n) }),
		"leases":     typed(cs.CoordinationV1().Leases(ns), func(n string, now time.Time) *coordinationv1.Lease { return newLease(ns, n, now) }),
		"events":     typed(cs.CoreV1().Events(ns), func(n string, now time.Time) *corev1.Event { return newEvent(ns, n, now) }),
	}
}
