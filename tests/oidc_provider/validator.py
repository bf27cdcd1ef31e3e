"""What the test provider puts in its tokens: the standard profile claims, a `groups`
claim (the user's Django groups, under the `groups` scope, as Okta does), and on request
a bad ID token (control.py) so the console's refusal can be tested."""

import base64

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from oauth2_provider.oauth2_validators import OAuth2Validator

from tests.oidc_provider import control

OTHER_AUDIENCE = "some-other-client"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _signed_by_a_stranger(token: str) -> str:
    """The same header (kid included) and claims, signed with a key nobody published."""
    header, payload, _ = token.split(".")
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signature = stranger.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{payload}.{_b64url(signature)}"


class GroupsValidator(OAuth2Validator):
    oidc_claim_scope = OAuth2Validator.oidc_claim_scope | {"groups": "groups"}

    def get_additional_claims(self, request):
        user = request.user
        return {
            "preferred_username": user.username,
            "email": user.email,
            "given_name": user.first_name,
            "family_name": user.last_name,
            "groups": sorted(group.name for group in user.groups.all()),
        }

    def finalize_id_token(self, id_token, token, token_handler, request):
        mode = control.tamper_mode()
        if mode == "audience":
            id_token["aud"] = OTHER_AUDIENCE
        signed = super().finalize_id_token(id_token, token, token_handler, request)
        if mode == "signature":
            return _signed_by_a_stranger(signed)
        return signed
