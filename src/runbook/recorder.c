/* recorder.c - the VMI move annotation written after each evacuation; see recorder.h. */
#include "recorder.h"

#include "../obs/log.h"
#include "../util/strbuf.h"
#include "../kubevirt/vm.h"

#include <stdio.h>
#include <string.h>

#define EVACUATION_TEXT "Eviction triggered evacuation"

static void record_move(move_recorder *r, const pod *p) {
  vm_view v;
  kubevirt_view(r->m, p, &v);
  if (!v.vmi)
    return;
  strbuf value = {0}, body = {0}, path = {0};
  kubevirt_moves_append(v.vmi->moves, r->now, 0, &value);
  sb_append(&body, "{\"metadata\":{\"annotations\":{");
  sb_append_json_str(&body, VMI_MOVES_ANNOTATION);
  sb_appendc(&body, ':');
  sb_append_json_str(&body, sb_str(&value));
  sb_append(&body, "}}}");
  sb_append(&path, "/apis/kubevirt.io/v1/namespaces/");
  kube_path_escape(&path, v.vmi->ns);
  sb_append(&path, "/virtualmachineinstances/");
  kube_path_escape(&path, v.vmi->name);
  kube_response resp = {0};
  dserr err;
  char vmi[512];
  snprintf(vmi, sizeof vmi, "%s/%s", v.vmi->ns, v.vmi->name);
  if (kube_request(r->client, "PATCH", sb_str(&path), "application/merge-patch+json",
                   sb_str(&body), &resp, &err) < 0) {
    LOGE(NULL, "Could not record the move on the VMI; its cooldown will not hold", err.msg,
         LSTR("vmi", vmi));
    r->failed++;
  } else if (resp.status < 200 || resp.status >= 300) {
    char msg[512], reason[128];
    kube_status_text(&resp, msg, sizeof msg, reason, sizeof reason);
    LOGE(NULL, "Could not record the move on the VMI; its cooldown will not hold",
         *msg ? msg : "the server refused the patch", LSTR("vmi", vmi), LINT("status", resp.status));
    r->failed++;
  } else {
    LOGV(3, NULL, "Recorded the move on the VMI", LSTR("vmi", vmi),
         LSTR("annotation", VMI_MOVES_ANNOTATION), LSTR("value", sb_str(&value)));
    r->recorded++;
  }
  kube_response_free(&resp);
  sb_free(&value);
  sb_free(&body);
  sb_free(&path);
}

static sink_result recorder_evict(eviction_sink *self, const pod *p, const eviction_request *req,
                                  char *msg, size_t cap) {
  move_recorder *r = (move_recorder *)self;
  sink_result res = r->inner->evict(r->inner, p, req, msg, cap);
  bool evacuation = res == SINK_TOO_MANY && strstr(msg, EVACUATION_TEXT) &&
                    !strstr(msg, "Evacuation in progress");
  if (!r->inner->dry_run && (evacuation || res == SINK_MIGRATING) && kubevirt_is_launcher(p))
    record_move(r, p);
  return res;
}

static void recorder_event(eviction_sink *self, const pod *p, const char *type, const char *reason,
                           const char *note) {
  move_recorder *r = (move_recorder *)self;
  if (r->inner->event)
    r->inner->event(r->inner, p, type, reason, note);
}

void move_recorder_init(move_recorder *r, eviction_sink *inner, kube_client *client,
                        const model *m, int64_t now) {
  memset(r, 0, sizeof *r);
  r->base.evict = recorder_evict;
  r->base.event = inner->event ? recorder_event : NULL;
  r->base.dry_run = inner->dry_run;
  r->inner = inner;
  r->client = client;
  r->m = m;
  r->now = now;
}
