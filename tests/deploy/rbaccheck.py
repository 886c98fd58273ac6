"""RBAC as kube-apiserver decides it, to compare a role with the requests a program made.

The API simulator (tests/apisim) records every request as `<verb> <path>` (Kubernetes verbs:
get, list, watch, create, update, patch, delete, deletecollection). This module turns such a
record into the attributes the RBAC authorizer sees, decides whether a set of roles allows
it, and reports the two ways a role can be wrong:

  refused  a request the role would refuse: the program would fail in a real cluster;
  unused   a grant (API group x resource x verb, or non-resource URL x verb) that no
           recorded request needed: the role is broader than the program.

The rules are Kubernetes' own, re-implemented from their documented behaviour (Go sources
for reference: `k8s.io/apiserver/pkg/endpoints/request/requestinfo.go` for paths,
`pkg/apis/rbac/v1/evaluation_helpers.go` for matching, `plugin/pkg/auth/authorizer/rbac/
bootstrappolicy/policy.go` for the default roles):

- `/api/v1/...` and `/apis/<group>/<version>/...` with at least one part after the version are
  resource requests; `/api`, `/api/v1`, `/apis/<group>/<version>`, `/version`... are not.
- `namespaces/<ns>/<resource>[/<name>[/<subresource>]]`; `namespaces/<ns>` alone is the
  namespace object itself, whose namespace attribute is <ns>, and `namespaces/<ns>/status`
  and `/finalize` are its subresources.
- A rule matches when its verbs, apiGroups and resources match (`*` for all; a resource
  `pods/eviction` for the subresource, `*/eviction` for that subresource of anything) and,
  if it lists resourceNames, the request names one of them. A create names nothing (the
  name is in the body), so resourceNames can never allow a create.
- A ClusterRole bound by a ClusterRoleBinding applies everywhere; a Role, or a ClusterRole
  bound by a RoleBinding, only to requests in the binding's namespace. Non-resource URLs
  (`/healthz`, `/version`; a trailing `*` is a prefix) only count from a ClusterRoleBinding.
- Every authenticated user (every ServiceAccount) holds `system:discovery`: get on /api,
  /api/*, /apis, /apis/*, /version, /healthz, /livez, /readyz, /openapi, /openapi/*. It is
  allowed but never reported unused: it is the cluster's, not ours.

Python standard library only.
"""

import collections

# system:discovery, bound to system:authenticated in every cluster
DISCOVERY_URLS = ("/livez", "/readyz", "/healthz", "/version", "/version/", "/openapi", "/openapi/*",
                  "/api", "/api/*", "/apis", "/apis/*")
NAMESPACE_SUBRESOURCES = ("status", "finalize")

Request = collections.namedtuple("Request", "verb path resource group subresource namespace name")


def parse_request(verb, path):
    """The authorizer's view of `<verb> <path>`: a Request (resource None for a non-resource URL)."""
    parts = [p for p in path.split("/") if p]
    nonresource = Request(verb, path, None, None, None, None, None)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return nonresource
    if parts[0] == "apis":
        if len(parts) < 4:
            return nonresource
        group, rest = parts[1], parts[3:]
    else:
        group, rest = "", parts[2:]
    if rest[0] == "watch":  # legacy /watch/ paths
        rest = rest[1:]
    namespace = None
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    if not rest:
        return nonresource
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    return Request(verb, path, resource, group, sub, namespace, name)


class Rule:
    """One PolicyRule of a role, with where it applies: namespace None = cluster-wide."""

    def __init__(self, rule, source, namespace=None, cluster_binding=True, role=None):
        def strings(key):
            v = rule.get(key)
            v = [] if v is None else v
            if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
                raise ValueError("%s: %s must be a list of strings, got %r" % (source, key, v))
            return tuple(v)
        self.verbs = strings("verbs")
        self.groups = strings("apiGroups")
        self.resources = strings("resources")
        self.names = strings("resourceNames")
        self.urls = strings("nonResourceURLs")
        self.source = source
        self.role = role or source
        self.namespace = namespace
        self.cluster_binding = cluster_binding
        if not self.verbs:
            raise ValueError("%s: a rule needs verbs" % source)
        if self.urls and (self.resources or self.groups):
            raise ValueError("%s: a rule has either nonResourceURLs or apiGroups/resources, not both" % source)

    def allows(self, req):
        if "*" not in self.verbs and req.verb not in self.verbs:
            return False
        if req.resource is None:
            return self.cluster_binding and any(
                u == "*" or u == req.path or (u.endswith("*") and req.path.startswith(u[:-1]))
                for u in self.urls)
        if self.namespace is not None and req.namespace != self.namespace:
            return False
        if "*" not in self.groups and req.group not in self.groups:
            return False
        combined = req.resource + ("/" + req.subresource if req.subresource else "")
        if not any(r == "*" or r == combined or
                   (req.subresource and r == "*/" + req.subresource) for r in self.resources):
            return False
        return not self.names or (req.name is not None and req.name in self.names)

    def grants(self):
        """The atoms this rule grants: one per (group, resource, verb) or (URL, verb)."""
        if self.urls:
            return [Grant(self, None, u, v) for u in self.urls for v in self.verbs]
        return [Grant(self, g, r, v) for g in self.groups for r in self.resources for v in self.verbs]


class Grant:
    """One atom of a rule; `allows` narrows the rule to this group/resource/verb."""

    def __init__(self, rule, group, resource, verb):
        self.rule, self.group, self.resource, self.verb = rule, group, resource, verb

    def allows(self, req):
        if not self.rule.allows(req):
            return False
        if self.verb != "*" and req.verb != self.verb:
            return False
        if self.group is None:
            return req.resource is None and (self.resource == "*" or self.resource == req.path or
                                             (self.resource.endswith("*") and req.path.startswith(self.resource[:-1])))
        combined = req.resource + ("/" + req.subresource if req.subresource else "")
        return ((self.group == "*" or self.group == req.group) and
                (self.resource in ("*", combined) or
                 (req.subresource is not None and self.resource == "*/" + req.subresource)))

    def key(self):
        """Identity across installs sharing a role: the role, scope, names and atom (not rule order)."""
        return (self.rule.role, self.rule.namespace, self.rule.names, self.group, self.resource, self.verb)

    def wildcard(self):
        return "*" in (self.group, self.resource, self.verb) or (self.group is None and self.resource.endswith("*"))

    def __str__(self):
        where = "cluster-wide" if self.rule.namespace is None else "in namespace %s" % self.rule.namespace
        names = " resourceNames=%s" % list(self.rule.names) if self.rule.names else ""
        if self.group is None:
            return "%s %s (%s, %s)" % (self.verb, self.resource, self.rule.source, where)
        return "%s %s%s%s (%s, %s)" % (self.verb, self.group + "/" if self.group else "", self.resource, names,
                                       self.rule.source, where)


def discovery_rules():
    return [Rule({"verbs": ["get"], "nonResourceURLs": list(DISCOVERY_URLS)}, "ClusterRole system:discovery")]


def subject_rules(objects, sa_namespace, sa_name):
    """The rules the ServiceAccount sa_namespace/sa_name holds through the bindings in objects.

    objects: Kubernetes objects (dicts) as rendered by kustomize. A binding to a role that is not
    among them is an error: the install would grant nothing."""
    roles = {}
    for o in objects:
        kind, md = o.get("kind"), o.get("metadata") or {}
        if kind in ("ClusterRole", "Role"):
            roles[(kind, md.get("namespace") if kind == "Role" else None, md.get("name"))] = o
    out = []
    for o in objects:
        kind, md = o.get("kind"), o.get("metadata") or {}
        if kind not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        bound = any(s.get("kind") == "ServiceAccount" and s.get("name") == sa_name and
                    (s.get("namespace") or md.get("namespace")) == sa_namespace for s in o.get("subjects") or [])
        if not bound:
            continue
        ref = o.get("roleRef") or {}
        ns = md.get("namespace") if kind == "RoleBinding" else None
        key = (ref.get("kind"), ns if ref.get("kind") == "Role" else None, ref.get("name"))
        role = roles.get(key)
        if role is None:
            raise ValueError("%s %s refers to %s %s, which the manifests do not define"
                             % (kind, md.get("name"), ref.get("kind"), ref.get("name")))
        source = "%s %s%s" % (key[0], key[1] + "/" if key[1] else "", key[2])
        for i, r in enumerate(role.get("rules") or []):
            out.append(Rule(r, "%s rule %d" % (source, i + 1), namespace=ns,
                            cluster_binding=kind == "ClusterRoleBinding", role=source))
    return out


Report = collections.namedtuple("Report", "refused unused")


def compare(installs):
    """Checks the roles of installs against the runs recorded with them.

    installs: {install name: (rules, {run name: {"<verb> <path>": count}})}, the rules being what
    that install's manifests grant (subject_rules). A request is refused when its install's
    rules and system:discovery do not allow it; a grant is unused when no run of any install
    holding the same grant (same role, rule and scope: two installs share a base role) needed
    it. Wildcards are always reported: no run can show that all they grant is needed.
    Returns Report(refused=[(run, "<verb> <path>")], unused=[str(grant)]), both empty when the
    roles are exactly what the runs needed."""
    defaults = discovery_rules()
    refused, seen, used = [], {}, set()
    for _, (rules, runs) in sorted(installs.items()):
        grants = [g for r in rules for g in r.grants()]
        for g in grants:
            seen.setdefault(g.key(), g)
        for run, counts in sorted(runs.items()):
            for key in sorted(counts):
                verb, _, path = key.partition(" ")
                req = parse_request(verb, path)
                allowing = [g.key() for g in grants if g.allows(req)]
                used.update(allowing)
                if not allowing and not any(d.allows(req) for d in defaults):
                    refused.append((run, key))
    unused = []
    for key, g in seen.items():
        if g.wildcard():
            unused.append("%s: a wildcard grants more than any run can show" % g)
        elif key not in used:
            unused.append(str(g))
    return Report(refused, unused)
