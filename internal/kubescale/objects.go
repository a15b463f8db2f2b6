package kubescale

import (
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The objects a run creates look like a small workload's: the sizes the
// API server stores for them (protobuf, with managedFields) are about
// those of a real cluster's (a pod 3-4 KiB, a service, a config map or a
// secret 1-2 KiB, an event under 1 KiB).

// label marks every object of a run, so that they can be listed and
// deleted as a whole.
const label = "app.kubernetes.io/created-by"

func meta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns,
		Labels: map[string]string{label: "etcdperf", "app": "density-" + name[len(name)-1:]}}
}

func name(resource string, i int64) string {
	return fmt.Sprintf("%s-%07d", strings.TrimSuffix(resource, "s"), i)
}

// filler is the configuration text real objects carry (an annotation, a
// config map's data), n bytes.
func filler(n int) string {
	const text = "etcdperf density test object; Kubernetes stores what its users give it. "
	return strings.Repeat(text, n/len(text)+1)[:n]
}

func newPod(ns, n string) *corev1.Pod {
	m := meta(ns, n)
	m.Annotations = map[string]string{"etcdperf.io/config": filler(1024)}
	no := false
	return &corev1.Pod{ObjectMeta: m, Spec: corev1.PodSpec{
		AutomountServiceAccountToken: &no,
		Containers: []corev1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
			Env: []corev1.EnvVar{{Name: "POD_NAME", Value: n}, {Name: "MODE", Value: "density"}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		}},
		// No scheduler has this name: the pods stay Pending and run
		// nowhere; the run updates their status as a kubelet would.
		SchedulerName: "etcdperf-no-scheduler",
	}}
}

func newService(ns, n string) *corev1.Service {
	return &corev1.Service{ObjectMeta: meta(ns, n), Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "density-" + n[len(n)-1:]},
		Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
	}}
}

func newConfigMap(ns, n string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: meta(ns, n), Data: map[string]string{"config.yaml": filler(1536)}}
}

func newSecret(ns, n string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: meta(ns, n), Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"token": []byte(filler(1024))}}
}

func newLease(ns, n string, now time.Time) *coordinationv1.Lease {
	holder := "etcdperf-node-" + n
	dur := int32(40)
	t := metav1.NewMicroTime(now)
	return &coordinationv1.Lease{ObjectMeta: meta(ns, n), Spec: coordinationv1.LeaseSpec{
		HolderIdentity: &holder, LeaseDurationSeconds: &dur, AcquireTime: &t, RenewTime: &t}}
}

func newEvent(ns, n string, now time.Time) *corev1.Event {
	t := metav1.NewTime(now)
	return &corev1.Event{ObjectMeta: meta(ns, n),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "pod-" + n[len(n)-7:], APIVersion: "v1"},
		Reason:         "Scheduled", Message: "Successfully assigned " + ns + "/" + n + " to etcdperf-node",
		Source: corev1.EventSource{Component: "etcdperf"}, FirstTimestamp: t, LastTimestamp: t, Count: 1, Type: corev1.EventTypeNormal}
}
