/* pbschema.c - the fields of a Pod and of a Node the decoders read (objects.c), as protobuf
 * numbers.
 *
 * kube-apiserver's protobuf for a PodList or a NodeList is read by these tables
 * (doc/doc_pb.h) into the tree the JSON reader would build from the same objects, cut down to
 * the fields below. Field numbers are k8s.io/api/core/v1/generated.proto's and
 * k8s.io/apimachinery's pkg/apis/meta/v1/generated.proto's; PB_OMITEMPTY marks the fields that
 * are no pointer in Go and `omitempty` in their JSON tag (core/v1/types.go, meta/v1/types.go).
 *
 * A field objects.c's pod or node decoder reads must be named here, or an object read from
 * protobuf lacks it: tests/unit/test_doc_pb.c decodes every test pod and node from its JSON
 * and from its JSON cut down to this schema and compares them. */
#include "decode.h"

#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MSG(name, fields)                                                                          \
  { name, N(fields), fields }

/* ---------- meta/v1 ---------- */

static const pb_field string_entry_fields[] = {
    {1, PB_STRING, 0, "key", NULL},
    {2, PB_STRING, 0, "value", NULL},
};
static const pb_msg pb_string_entry = MSG("map<string,string>", string_entry_fields);

static const pb_field quantity_entry_fields[] = {
    {1, PB_STRING, 0, "key", NULL},
    {2, PB_QUANTITY, 0, "value", NULL},
};
static const pb_msg pb_quantity_entry = MSG("ResourceList", quantity_entry_fields);

static const pb_field owner_fields[] = {
    {1, PB_STRING, 0, "kind", NULL},
    {3, PB_STRING, 0, "name", NULL},
    {4, PB_STRING, 0, "uid", NULL},
    {6, PB_BOOL, 0, "controller", NULL}, /* *bool */
};
static const pb_msg pb_owner_reference = MSG("OwnerReference", owner_fields);

static const pb_field object_meta_fields[] = {
    {1, PB_STRING, PB_OMITEMPTY, "name", NULL},
    {3, PB_STRING, PB_OMITEMPTY, "namespace", NULL},
    {5, PB_STRING, PB_OMITEMPTY, "uid", NULL},
    {6, PB_STRING, PB_OMITEMPTY, "resourceVersion", NULL},
    {8, PB_TIME, 0, "creationTimestamp", NULL},
    {9, PB_TIME, 0, "deletionTimestamp", NULL}, /* *Time */
    {11, PB_MAP, PB_REPEATED, "labels", &pb_string_entry},
    {12, PB_MAP, PB_REPEATED, "annotations", &pb_string_entry},
    {13, PB_MESSAGE, PB_REPEATED, "ownerReferences", &pb_owner_reference},
};
static const pb_msg pb_object_meta = MSG("ObjectMeta", object_meta_fields);

static const pb_field selector_req_fields[] = {
    {1, PB_STRING, 0, "key", NULL},
    {2, PB_STRING, 0, "operator", NULL},
    {3, PB_STRING, PB_REPEATED, "values", NULL},
};
static const pb_msg pb_selector_req = MSG("LabelSelectorRequirement", selector_req_fields);

static const pb_field label_selector_fields[] = {
    {1, PB_MAP, PB_REPEATED, "matchLabels", &pb_string_entry},
    {2, PB_MESSAGE, PB_REPEATED, "matchExpressions", &pb_selector_req},
};
static const pb_msg pb_label_selector = MSG("LabelSelector", label_selector_fields);

/* ---------- core/v1: spec ---------- */

static const pb_field pvc_source_fields[] = {
    {1, PB_STRING, 0, "claimName", NULL},
};
static const pb_msg pb_pvc_source = MSG("PersistentVolumeClaimVolumeSource", pvc_source_fields);

/* only whether they are there is read */
static const pb_msg pb_present_only = {"(not read)", 0, NULL};

static const pb_field volume_source_fields[] = {
    {1, PB_MESSAGE, 0, "hostPath", &pb_present_only},
    {2, PB_MESSAGE, 0, "emptyDir", &pb_present_only},
    {10, PB_MESSAGE, 0, "persistentVolumeClaim", &pb_pvc_source},
};
static const pb_msg pb_volume_source = MSG("VolumeSource", volume_source_fields);

static const pb_field volume_fields[] = {
    {2, PB_INLINE, 0, NULL, &pb_volume_source}, /* `json:",inline"` */
};
static const pb_msg pb_volume = MSG("Volume", volume_fields);

static const pb_field requirements_fields[] = {
    {1, PB_MAP, PB_REPEATED, "limits", &pb_quantity_entry},
    {2, PB_MAP, PB_REPEATED, "requests", &pb_quantity_entry},
};
static const pb_msg pb_requirements = MSG("ResourceRequirements", requirements_fields);

static const pb_field container_fields[] = {
    {2, PB_STRING, PB_OMITEMPTY, "image", NULL},
    {8, PB_MESSAGE, 0, "resources", &pb_requirements},
    {24, PB_STRING, 0, "restartPolicy", NULL}, /* *ContainerRestartPolicy */
};
static const pb_msg pb_container = MSG("Container", container_fields);

static const pb_field node_req_fields[] = {
    {1, PB_STRING, 0, "key", NULL},
    {2, PB_STRING, 0, "operator", NULL},
    {3, PB_STRING, PB_REPEATED, "values", NULL},
};
static const pb_msg pb_node_req = MSG("NodeSelectorRequirement", node_req_fields);

static const pb_field node_term_fields[] = {
    {1, PB_MESSAGE, PB_REPEATED, "matchExpressions", &pb_node_req},
    {2, PB_MESSAGE, PB_REPEATED, "matchFields", &pb_node_req},
};
static const pb_msg pb_node_term = MSG("NodeSelectorTerm", node_term_fields);

static const pb_field node_selector_fields[] = {
    {1, PB_MESSAGE, PB_REPEATED, "nodeSelectorTerms", &pb_node_term},
};
static const pb_msg pb_node_selector = MSG("NodeSelector", node_selector_fields);

static const pb_field preferred_term_fields[] = {
    {1, PB_INT, 0, "weight", NULL},
    {2, PB_MESSAGE, 0, "preference", &pb_node_term},
};
static const pb_msg pb_preferred_term = MSG("PreferredSchedulingTerm", preferred_term_fields);

static const pb_field node_affinity_fields[] = {
    {1, PB_MESSAGE, 0, "requiredDuringSchedulingIgnoredDuringExecution", &pb_node_selector},
    {2, PB_MESSAGE, PB_REPEATED, "preferredDuringSchedulingIgnoredDuringExecution",
     &pb_preferred_term},
};
static const pb_msg pb_node_affinity = MSG("NodeAffinity", node_affinity_fields);

static const pb_field pod_affinity_term_fields[] = {
    {1, PB_MESSAGE, 0, "labelSelector", &pb_label_selector},
    {2, PB_STRING, PB_REPEATED, "namespaces", NULL},
    {3, PB_STRING, 0, "topologyKey", NULL},
};
static const pb_msg pb_pod_affinity_term = MSG("PodAffinityTerm", pod_affinity_term_fields);

static const pb_field anti_affinity_fields[] = {
    {1, PB_MESSAGE, PB_REPEATED, "requiredDuringSchedulingIgnoredDuringExecution",
     &pb_pod_affinity_term},
};
static const pb_msg pb_anti_affinity = MSG("PodAntiAffinity", anti_affinity_fields);

static const pb_field affinity_fields[] = {
    {1, PB_MESSAGE, 0, "nodeAffinity", &pb_node_affinity},
    {3, PB_MESSAGE, 0, "podAntiAffinity", &pb_anti_affinity},
};
static const pb_msg pb_affinity = MSG("Affinity", affinity_fields);

static const pb_field toleration_fields[] = {
    {1, PB_STRING, PB_OMITEMPTY, "key", NULL},
    {2, PB_STRING, PB_OMITEMPTY, "operator", NULL},
    {3, PB_STRING, PB_OMITEMPTY, "value", NULL},
    {4, PB_STRING, PB_OMITEMPTY, "effect", NULL},
};
static const pb_msg pb_toleration = MSG("Toleration", toleration_fields);

static const pb_field spread_fields[] = {
    {1, PB_INT, 0, "maxSkew", NULL},
    {2, PB_STRING, 0, "topologyKey", NULL},
    {3, PB_STRING, 0, "whenUnsatisfiable", NULL},
    {4, PB_MESSAGE, 0, "labelSelector", &pb_label_selector},
    {6, PB_STRING, 0, "nodeAffinityPolicy", NULL}, /* *NodeInclusionPolicy */
    {7, PB_STRING, 0, "nodeTaintsPolicy", NULL},   /* *NodeInclusionPolicy */
    {8, PB_STRING, PB_REPEATED, "matchLabelKeys", NULL},
};
static const pb_msg pb_spread = MSG("TopologySpreadConstraint", spread_fields);

static const pb_field resource_claim_fields[] = {
    {1, PB_STRING, 0, "name", NULL},
};
static const pb_msg pb_resource_claim = MSG("PodResourceClaim", resource_claim_fields);

static const pb_field pod_spec_fields[] = {
    {1, PB_MESSAGE, PB_REPEATED, "volumes", &pb_volume},
    {2, PB_MESSAGE, PB_REPEATED, "containers", &pb_container},
    {7, PB_MAP, PB_REPEATED, "nodeSelector", &pb_string_entry},
    {10, PB_STRING, PB_OMITEMPTY, "nodeName", NULL},
    {18, PB_MESSAGE, 0, "affinity", &pb_affinity},
    {20, PB_MESSAGE, PB_REPEATED, "initContainers", &pb_container},
    {22, PB_MESSAGE, PB_REPEATED, "tolerations", &pb_toleration},
    {25, PB_INT, 0, "priority", NULL}, /* *int32 */
    {32, PB_MAP, PB_REPEATED, "overhead", &pb_quantity_entry},
    {33, PB_MESSAGE, PB_REPEATED, "topologySpreadConstraints", &pb_spread},
    {39, PB_MESSAGE, PB_REPEATED, "resourceClaims", &pb_resource_claim},
    {40, PB_MESSAGE, 0, "resources", &pb_requirements}, /* *ResourceRequirements */
};
static const pb_msg pb_pod_spec = MSG("PodSpec", pod_spec_fields);

/* ---------- core/v1: status ---------- */

static const pb_field waiting_fields[] = {
    {1, PB_STRING, PB_OMITEMPTY, "reason", NULL},
};
static const pb_msg pb_waiting = MSG("ContainerStateWaiting", waiting_fields);

static const pb_field terminated_fields[] = {
    {1, PB_INT, 0, "exitCode", NULL},
    {3, PB_STRING, PB_OMITEMPTY, "reason", NULL},
};
static const pb_msg pb_terminated = MSG("ContainerStateTerminated", terminated_fields);

static const pb_field state_fields[] = {
    {1, PB_MESSAGE, 0, "waiting", &pb_waiting},       /* pointer */
    {3, PB_MESSAGE, 0, "terminated", &pb_terminated}, /* pointer */
};
static const pb_msg pb_state = MSG("ContainerState", state_fields);

static const pb_field container_status_fields[] = {
    {1, PB_STRING, 0, "name", NULL},
    {2, PB_MESSAGE, 0, "state", &pb_state},
    {5, PB_INT, 0, "restartCount", NULL},
};
static const pb_msg pb_container_status = MSG("ContainerStatus", container_status_fields);

static const pb_field condition_fields[] = {
    {1, PB_STRING, 0, "type", NULL},
    {2, PB_STRING, 0, "status", NULL},
    {4, PB_TIME, 0, "lastTransitionTime", NULL},
    {5, PB_STRING, PB_OMITEMPTY, "reason", NULL},
};
static const pb_msg pb_condition = MSG("PodCondition", condition_fields);

static const pb_field pod_status_fields[] = {
    {1, PB_STRING, PB_OMITEMPTY, "phase", NULL},
    {2, PB_MESSAGE, PB_REPEATED, "conditions", &pb_condition},
    {4, PB_STRING, PB_OMITEMPTY, "reason", NULL},
    {7, PB_TIME, 0, "startTime", NULL}, /* *Time */
    {8, PB_MESSAGE, PB_REPEATED, "containerStatuses", &pb_container_status},
    {9, PB_STRING, PB_OMITEMPTY, "qosClass", NULL},
    {10, PB_MESSAGE, PB_REPEATED, "initContainerStatuses", &pb_container_status},
    {13, PB_MESSAGE, PB_REPEATED, "ephemeralContainerStatuses", &pb_container_status},
};
static const pb_msg pb_pod_status = MSG("PodStatus", pod_status_fields);

static const pb_field pod_fields[] = {
    {1, PB_MESSAGE, 0, "metadata", &pb_object_meta},
    {2, PB_MESSAGE, 0, "spec", &pb_pod_spec},
    {3, PB_MESSAGE, 0, "status", &pb_pod_status},
};
const pb_msg decode_pod_pb = MSG("Pod", pod_fields);

/* ---------- core/v1: Node ---------- */

static const pb_field taint_fields[] = {
    {1, PB_STRING, 0, "key", NULL},
    {2, PB_STRING, PB_OMITEMPTY, "value", NULL},
    {3, PB_STRING, 0, "effect", NULL},
};
static const pb_msg pb_taint = MSG("Taint", taint_fields);

static const pb_field node_spec_fields[] = {
    {4, PB_BOOL, PB_OMITEMPTY, "unschedulable", NULL},
    {5, PB_MESSAGE, PB_REPEATED, "taints", &pb_taint},
};
static const pb_msg pb_node_spec = MSG("NodeSpec", node_spec_fields);

static const pb_field node_condition_fields[] = {
    {1, PB_STRING, 0, "type", NULL},
    {2, PB_STRING, 0, "status", NULL},
};
static const pb_msg pb_node_condition = MSG("NodeCondition", node_condition_fields);

static const pb_field node_status_fields[] = {
    {1, PB_MAP, PB_REPEATED, "capacity", &pb_quantity_entry},
    {2, PB_MAP, PB_REPEATED, "allocatable", &pb_quantity_entry},
    {4, PB_MESSAGE, PB_REPEATED, "conditions", &pb_node_condition},
};
static const pb_msg pb_node_status = MSG("NodeStatus", node_status_fields);

static const pb_field node_fields[] = {
    {1, PB_MESSAGE, 0, "metadata", &pb_object_meta},
    {2, PB_MESSAGE, 0, "spec", &pb_node_spec},
    {3, PB_MESSAGE, 0, "status", &pb_node_status},
};
const pb_msg decode_node_pb = MSG("Node", node_fields);

const pb_msg *decode_pb_schema(const char *kind) {
  if (!kind)
    return NULL;
  if (strcmp(kind, "Pod") == 0)
    return &decode_pod_pb;
  if (strcmp(kind, "Node") == 0)
    return &decode_node_pb;
  return NULL;
}
