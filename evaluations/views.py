"""Pages of the benchmark-data app."""
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .selectors import rubric_active


def home(request: HttpRequest) -> HttpResponse:
    """Landing page: what the instrument is and where to go next."""
    rubric = rubric_active() if request.user.is_authenticated else None
    return render(request, "home.html", {"rubric": rubric})
