"""The person's own data as a JSON download (Art. 15 access, Art. 20 portability): accounts:my_data."""
from __future__ import annotations

import json

from django.http import HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from access.policy import Action, policy_required
from accounts.http import AuthedRequest

from .privacy import personal_data_export


@never_cache
@policy_required(Action.USE_ACCOUNT)
@require_http_methods(["GET"])
def my_data(request: AuthedRequest) -> HttpResponse:
    """Everything stored about the signed-in person (there is no id in the URL: nobody can ask for another's)."""
    data = personal_data_export(user=request.user, requested_by=request.user)
    response = HttpResponse(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str),
                            content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="faithbench-my-data-{request.user.pk}.json"'
    response.audit_recorded = True  # type: ignore[attr-defined]  # recorded as a data export by the service
    return response
