"""What the action kinds say (console/texts/): plan summaries and warnings, dry runs,
read-back checks, the objects they are about, and their refusals. Object names, counts,
flags and settings names are parameters, shown as they are."""

from django.utils.translation import gettext_noop, ngettext_lazy

from console.texts import texts_register

texts_register(
    {
        # Text stored before it had an id, or a tool's own words (Kubernetes, a parser).
        "actions.raw": gettext_noop("%(text)s"),
        # --- parameters ------------------------------------------------------------------
        "actions.param.error": gettext_noop("%(field)s: %(detail)s"),
        "actions.param.object": gettext_noop("must be an object"),
        "actions.param.unknown": gettext_noop("unknown parameter; allowed: %(allowed)s"),
        "actions.param.required": gettext_noop("is required"),
        "actions.param.string": gettext_noop("must be a string"),
        "actions.param.bad_name": gettext_noop(
            "%(value)s is not a valid Kubernetes name (lowercase letters, digits, '-')"
        ),
        "actions.param.integer": gettext_noop("must be an integer"),
        "actions.param.at_least": gettext_noop("must be at least %(low)s (got %(value)s)"),
        "actions.param.at_most": gettext_noop("must be at most %(high)s (got %(value)s)"),
        "actions.param.bool": gettext_noop("must be true or false"),
        "actions.param.one_of": gettext_noop("give exactly one of %(first)s or %(second)s"),
        "actions.param.unknown_kind": gettext_noop(
            "unknown action kind %(kind)s; one of %(known)s"
        ),
        "actions.param.not_zero": gettext_noop("must not be 0"),
        "actions.param.reason": gettext_noop("is required: say why the node is cordoned"),
        "actions.param.too_long": gettext_noop("must be at most %(limit)s characters"),
        "actions.param.restart_with_cordon": gettext_noop(
            "only with cordon: an uncordon never restarts"
        ),
        "actions.param.data_or_revision": gettext_noop("give either revision or data, not both"),
        "actions.param.data_shape": gettext_noop(
            "must be an object of string keys to string values"
        ),
        "actions.param.revision": gettext_noop(
            "must be before_incident, previous or a revision id"
        ),
        "actions.param.at_least_one": gettext_noop("give at least one of %(keys)s"),
        "actions.param.not_lws_pod": gettext_noop("pod %(pod)s is not part of a LeaderWorkerSet"),
        "actions.param.other_lws": gettext_noop("pod %(pod)s belongs to %(found)s, not %(lws)s"),
        # --- what a run is about (the approval policy names it) ---------------------------
        "actions.subject.lws": gettext_noop("lws %(lws)s in %(namespace)s"),
        "actions.subject.configmap": gettext_noop("configmap %(configmap)s in %(namespace)s"),
        "actions.subject.routed": gettext_noop(
            "%(namespace)s, where configmap %(configmap)s routes traffic"
        ),
        "actions.subject.node": gettext_noop("node %(node)s"),
        "actions.subject.restarted": gettext_noop("%(subject)s, restarted by this cordon"),
        # --- what a guard judges against what (GuardSplit) ----------------------------------
        "actions.split.new_groups": gettext_noop("the new groups %(groups)s"),
        "actions.split.old_groups": gettext_noop("the old groups %(groups)s"),
        "actions.split.other_groups": gettext_noop("the other groups"),
        "actions.split.restarted": gettext_noop("the restarted group %(group)s"),
        "actions.split.rescheduled": gettext_noop("the rescheduled groups %(groups)s"),
        "actions.split.rolled_with": gettext_noop("the groups rolled out with --enforce-eager"),
        "actions.split.rolled_without": gettext_noop(
            "the groups rolled out without --enforce-eager"
        ),
        "actions.split.not_rolled": gettext_noop("the groups not rolled out yet"),
        # --- shared by several kinds ------------------------------------------------------
        "actions.dry_run.accepted": gettext_noop("server dry run accepted"),
        "actions.dry_run.not_needed": gettext_noop("nothing to change; no dry run needed"),
        # --- scale_lws ----------------------------------------------------------------------
        "actions.scale.range": gettext_noop(
            "%(where)s would have %(want)s groups; allowed range is %(low)s..%(high)s "
            "(ACTIONS_SCALE_MIN_REPLICAS / ACTIONS_SCALE_MAX_REPLICAS)"
        ),
        "actions.scale.step": gettext_noop(
            "scaling %(where)s from %(have)s to %(want)s groups is a step of %(step)s; at most "
            "%(max)s per action (ACTIONS_SCALE_MAX_STEP)"
        ),
        "actions.scale.unchanged": gettext_noop(
            "%(where)s already has %(have)s groups; nothing to change"
        ),
        "actions.scale.summary": gettext_noop("Scale %(where)s from %(have)s to %(want)s groups"),
        "actions.scale.down": gettext_noop(
            "scale-down deletes the highest-index groups (%(low)s..%(high)s) and their "
            "in-flight requests"
        ),
        "actions.scale.up": gettext_noop(
            "new groups need free GPU nodes and take minutes to load the model"
        ),
        "actions.scale.dry_run": gettext_noop(
            "server dry run accepted: spec.replicas %(have)s -> %(want)s"
        ),
        "actions.scale.verify_wrong": gettext_noop("spec.replicas is %(have)s, expected %(want)s"),
        "actions.scale.verify_ok": gettext_noop(
            "spec.replicas is %(want)s (%(running)s groups exist now; LWS is reconciling)"
        ),
        "actions.scale.unread": gettext_noop(
            "Kubernetes could not be read to compare this with the ready groups of %(where)s, "
            "and it may scale down."
        ),
        "actions.scale.below_ready": gettext_noop(
            "%(ready)s groups are ready in %(where)s and this leaves %(want)s: more than "
            "ACTIONS_SCALE_MAX_STEP (%(step)s) below the ready groups."
        ),
        # --- cordon_node ---------------------------------------------------------------------
        "actions.cordon.uncordon": gettext_noop("Uncordon %(node)s and remove the %(taint)s taint"),
        "actions.cordon.untaint": gettext_noop(
            "Remove the %(taint)s taint from %(node)s (it stays unschedulable)"
        ),
        "actions.cordon.not_cordoned": gettext_noop(
            "%(node)s is not cordoned by the console; nothing to change"
        ),
        "actions.cordon.limit": ngettext_lazy(
            "%(count)s GPU node is already cordoned (%(nodes)s); at most %(limit)s may be "
            "(ACTIONS_MAX_CORDONED_NODES). Uncordon one first.",
            "%(count)s GPU nodes are already cordoned (%(nodes)s); at most %(limit)s may be "
            "(ACTIONS_MAX_CORDONED_NODES). Uncordon one first.",
            "count",
        ),
        "actions.cordon.keeps_running": gettext_noop(
            "pods already on the node keep running (NoSchedule does not evict)"
        ),
        "actions.cordon.summary": gettext_noop("Cordon %(node)s (%(reason)s)"),
        "actions.cordon.summary_restart": gettext_noop(
            "Cordon %(node)s (%(reason)s) and restart the LWS groups on it: %(groups)s"
        ),
        "actions.cordon.drops": gettext_noop(
            "restarting drops the in-flight requests of %(groups)s"
        ),
        "actions.cordon.already": gettext_noop(
            "%(node)s is already cordoned by the console; nothing to change"
        ),
        "actions.cordon.dry_run": gettext_noop("server dry run: %(steps)s"),
        "actions.cordon.dry_run_nothing": gettext_noop("server dry run: nothing to change"),
        "actions.cordon.node_accepted": gettext_noop("node patch accepted;"),
        "actions.cordon.would_delete": gettext_noop("would delete %(pod)s;"),
        "actions.cordon.verify_node": gettext_noop(
            "%(node)s: unschedulable=%(unschedulable)s, taint=%(taint)s"
        ),
        "actions.cordon.verify_pods": gettext_noop(
            "LWS pods still on %(node)s (their groups are restarting): %(pods)s"
        ),
        "actions.cordon.verify_untainted": gettext_noop(
            "%(node)s no longer carries the %(taint)s taint"
        ),
        "actions.cordon.verify_ok": gettext_noop("%(node)s is unschedulable and tainted %(taint)s"),
        "actions.cordon.verify_moved": gettext_noop(
            "%(node)s is unschedulable and tainted %(taint)s and no LWS pods remain on it"
        ),
        "actions.cordon.no_undo": gettext_noop(
            "an uncordon is undone by a new cordon_node run with a reason"
        ),
        # --- set_enforce_eager ------------------------------------------------------------
        "actions.eager.no_invocation": gettext_noop(
            "no vLLM invocation found in container '%(container)s' of %(where)s's leader or "
            "worker template; cannot place --enforce-eager"
        ),
        "actions.eager.has": gettext_noop(
            "%(where)s already has --enforce-eager; nothing to change"
        ),
        "actions.eager.has_not": gettext_noop(
            "%(where)s already runs without --enforce-eager; nothing to change"
        ),
        "actions.eager.rolls": gettext_noop(
            "changes the pod template: LWS rolls every group of %(where)s, one at a time "
            "(maxUnavailable), each group reloading the model"
        ),
        "actions.eager.slower": gettext_noop(
            "eager mode disables CUDA graphs: decode is roughly 30%% slower"
        ),
        "actions.eager.add": gettext_noop("Add --enforce-eager to %(where)s (rolls every group)"),
        "actions.eager.remove": gettext_noop(
            "Remove --enforce-eager from %(where)s (rolls every group)"
        ),
        "actions.eager.dry_run_no_flag": gettext_noop(
            "server dry run accepted (but the flag did not take)"
        ),
        "actions.eager.not_present": gettext_noop("--enforce-eager is not present in %(where)s"),
        "actions.eager.not_absent": gettext_noop("--enforce-eager is not absent in %(where)s"),
        "actions.eager.present": gettext_noop(
            "--enforce-eager is present in the templates; rollout: %(updated)s/%(replicas)s "
            "groups updated"
        ),
        "actions.eager.absent": gettext_noop(
            "--enforce-eager is absent in the templates; rollout: %(updated)s/%(replicas)s "
            "groups updated"
        ),
        # --- restart_lws_group / LWS pods --------------------------------------------------
        "actions.restart.no_group": gettext_noop(
            "leaderworkerset %(where)s has %(replicas)s groups; there is no group %(group)s"
        ),
        "actions.restart.pod_gone": gettext_noop(
            "pod %(pod)s not found, and its name does not say which group of %(lws)s it belonged to"
        ),
        "actions.restart.no_leader": gettext_noop(
            "group %(group)s of %(where)s has no leader pod right now: LWS is already "
            "recreating it; nothing to restart"
        ),
        "actions.restart.summary": gettext_noop(
            "Restart group %(group)s of %(where)s: delete leader pod %(leader)s so LWS "
            "recreates the whole group"
        ),
        "actions.restart.summary_pod": gettext_noop(
            "Restart group %(group)s (from pod %(pod)s) of %(where)s: delete leader pod "
            "%(leader)s so LWS recreates the whole group"
        ),
        "actions.restart.fails": gettext_noop(
            "in-flight requests on group %(group)s fail, and the group serves nothing until "
            "its pods are rescheduled and the model has loaded (minutes)"
        ),
        "actions.restart.no_undo_warning": gettext_noop("cannot be undone"),
        "actions.restart.dry_run": gettext_noop(
            "server dry run accepted: would delete pod %(pod)s (uid %(uid)s)"
        ),
        "actions.restart.terminating": gettext_noop(
            "leader pod %(pod)s is terminating; LWS recreates the group"
        ),
        "actions.restart.old_uid": gettext_noop(
            "leader pod %(pod)s still has its old uid (%(phase)s)"
        ),
        "actions.restart.deleted": gettext_noop(
            "leader pod %(pod)s deleted; LWS is recreating the group"
        ),
        "actions.restart.recreated": gettext_noop(
            "leader pod %(pod)s recreated (uid %(uid)s, %(phase)s)"
        ),
        "actions.restart.no_undo": gettext_noop(
            "a group restart cannot be undone: the old pods are gone and LWS has created new ones"
        ),
        # --- rollback_router_config ---------------------------------------------------------
        "actions.rollback.no_history": gettext_noop(
            "no revision history is available for %(where)s"
        ),
        "actions.rollback.saved_data": gettext_noop("the saved data"),
        "actions.rollback.revision": gettext_noop("revision %(id)s (%(label)s, captured %(when)s)"),
        "actions.rollback.matches": gettext_noop("%(where)s already matches %(what)s"),
        "actions.rollback.summary": gettext_noop("Roll back %(where)s to %(what)s"),
        "actions.rollback.reload": gettext_noop(
            "the router reloads its dynamic config within about 10 s of the kubelet updating "
            "the mounted file (ConfigMap volumes can take 60-90 s)"
        ),
        "actions.rollback.verify_wrong": gettext_noop(
            "data differs from the restored revision in %(keys)s"
        ),
        "actions.rollback.verify_ok": gettext_noop("data matches (resourceVersion %(version)s)"),
        # --- update_gateway_limits ---------------------------------------------------------
        "actions.gateway.no_key": gettext_noop(
            "%(where)s has no data[%(item)s]; is this the gateway ConfigMap?"
        ),
        "actions.gateway.not_json": gettext_noop(
            "%(where)s data[%(item)s] is not valid JSON: %(detail)s"
        ),
        "actions.gateway.not_object": gettext_noop("%(where)s data[%(item)s] is not a JSON object"),
        "actions.gateway.unchanged": gettext_noop("%(where)s already has these limits"),
        "actions.gateway.capped": gettext_noop(
            "requests asking for more than %(cap)s tokens will be capped"
        ),
        "actions.gateway.burst": gettext_noop(
            "rate_limit_burst is below rate_limit_rps: short bursts get 429s"
        ),
        "actions.gateway.summary": gettext_noop("Set gateway limits in %(where)s: %(changes)s"),
        "actions.gateway.moved": gettext_noop(
            "configmap %(where)s changed since it was read (resourceVersion %(before)s -> "
            "%(now)s); re-read and retry"
        ),
        "actions.gateway.verify_wrong": gettext_noop("%(item)s is %(have)s, expected %(want)s."),
        "actions.gateway.verify_ok": gettext_noop(
            "%(item)s holds the new limits (resourceVersion %(version)s)"
        ),
        "actions.gateway.no_undo": gettext_noop(
            "this change cannot be undone: the keys it set did not exist before"
        ),
    }
)
