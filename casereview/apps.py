from django.apps import AppConfig


class CaseReviewConfig(AppConfig):
    name = "casereview"
    label = "casereview"
    verbose_name = "Case review (test validity)"
