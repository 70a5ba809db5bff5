"""Pages of the benchmark-data app."""
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect


def home(request: HttpRequest) -> HttpResponse:
    """/evaluations/ is the home page (config.home), kept as an address."""
    return redirect("home")
