"""REST API of the pre-launch checklist, mirroring the pages: the deployments with their
red/amber/green, one deployment's items with evidence, a verification on demand, and
sign-offs. Refusals answer 409 {"detail", "code"}, bad input 400, unknown ids 404. Texts
are worded in the request's language (Accept-Language, or ?lang=), each with its ids and
parameters beside it (`summary_i18n`, `evidence_i18n`, ...)."""

from django.utils.translation import gettext_noop
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from console.api.base import (
    ITEM_READ_ERRORS,
    ITEM_WRITE_ERRORS,
    READ_ERRORS,
    WRITE_ERRORS,
    ConsoleApi,
    parse_body,
)
from console.errors import NotFound
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from readiness import selectors, services
from readiness.permissions import SIGN_OFF, VERIFY, VIEW
from readiness.serializers import (
    ChecklistSerializer,
    DeploymentSerializer,
    RevokeInputSerializer,
    SignOffInputSerializer,
    SignOffSerializer,
    VerificationSerializer,
)

TAG = "readiness"


def _checklist(pk: int):
    checklist = selectors.deployment_checklist(deployment_id=pk)
    if checklist is None:
        raise NotFound(gettext_noop("Deployment #%(id)s does not exist."), params={"id": pk})
    return checklist


class ReadinessApi(ConsoleApi):
    noun = "deployment"
    pagination_class = None


@extend_schema(tags=[TAG])
class DeploymentListApi(ReadinessApi):
    """Every deployment (namespace + LWS) found in the cluster, red first, with counts of
    green/amber/red items and when it was last verified."""

    permission_classes = [HasConsoleRole, require_perm(VIEW)]

    @extend_schema(
        operation_id="readiness_deployments_list",
        summary="Deployments and their checklist colour",
        responses={200: DeploymentSerializer(many=True), **READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        return Response(DeploymentSerializer(selectors.deployment_list(), many=True).data)


@extend_schema(tags=[TAG])
class DeploymentDetailApi(ReadinessApi):
    """The 15 items of one deployment: state, colour, summary, evidence and sign-offs."""

    permission_classes = [HasConsoleRole, require_perm(VIEW)]

    @extend_schema(
        operation_id="readiness_deployments_retrieve",
        summary="One deployment's checklist",
        responses={200: ChecklistSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        return Response(ChecklistSerializer(_checklist(pk)).data)


@extend_schema(tags=[TAG])
class DeploymentVerifyApi(ReadinessApi):
    """Queue a verification on the worker (responder). While one is queued or running,
    answers that one (200) instead of queuing another (202)."""

    permission_classes = [HasConsoleRole, require_perm(VERIFY)]

    @extend_schema(
        operation_id="readiness_deployments_verify",
        summary="Verify the checklist now",
        request=None,
        responses={202: VerificationSerializer, 200: VerificationSerializer, **ITEM_WRITE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        verification, created = services.verification_request(deployment_id=pk, actor=request.user)
        code = status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK
        return Response(VerificationSerializer(verification).data, status=code)


@extend_schema(tags=[TAG])
class VerificationDetailApi(ReadinessApi):
    """A verification's progress (queued, running, done, failed)."""

    noun = "verification"
    permission_classes = [HasConsoleRole, require_perm(VIEW)]

    @extend_schema(
        operation_id="readiness_verifications_retrieve",
        summary="One verification",
        responses={200: VerificationSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        verification = self.found(selectors.verification_get(verification_id=pk), pk)
        return Response(VerificationSerializer(verification).data)


@extend_schema(tags=[TAG])
class SignOffApi(ReadinessApi):
    """The deployment's sign-off history, newest first (GET), or a new sign-off of a
    person-checked item (POST, commander)."""

    def get_permissions(self):
        perm = SIGN_OFF if self.request.method == "POST" else VIEW
        return [HasConsoleRole(), require_perm(perm)()]

    @extend_schema(
        operation_id="readiness_signoffs_list",
        summary="Sign-off history",
        responses={200: SignOffSerializer(many=True), **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        rows = _checklist(pk).rows
        history = sorted(
            (s for r in rows for s in r.history), key=lambda s: (s.at, s.pk), reverse=True
        )
        return Response(SignOffSerializer(history, many=True).data)

    @extend_schema(
        operation_id="readiness_signoffs_create",
        summary="Sign off an item (commander)",
        request=SignOffInputSerializer,
        responses={201: SignOffSerializer, **WRITE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(SignOffInputSerializer, request)
        signoff = services.signoff_record(
            deployment_id=pk, item=data["item"], actor=request.user, note=data["note"],
            expires_on=data["expires_on"],
        )  # fmt: skip
        return Response(SignOffSerializer(signoff).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=[TAG])
class SignOffRevokeApi(ReadinessApi):
    """Withdraw an item's sign-off (commander); the history keeps both rows."""

    permission_classes = [HasConsoleRole, require_perm(SIGN_OFF)]

    @extend_schema(
        operation_id="readiness_signoffs_revoke",
        summary="Revoke a sign-off (commander)",
        request=RevokeInputSerializer,
        responses={201: SignOffSerializer, **WRITE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(RevokeInputSerializer, request)
        signoff = services.signoff_revoke(
            deployment_id=pk, item=data["item"], actor=request.user, note=data["note"]
        )
        return Response(SignOffSerializer(signoff).data, status=status.HTTP_201_CREATED)
