from django.apps import AppConfig


class CaseReviewConfig(AppConfig):
    name = "casereview"
    label = "casereview"
    verbose_name = "Case review (test validity)"

    def ready(self) -> None:
        # case-review reports and IRT fits are evidence snapshots: register their kinds; a review cycle's reports
        # name it by id, so deleting it is refused like a PROTECT
        from evidence.models import Snapshot
        from evidence.services import subject_protect

        from . import reports  # noqa: F401 (its kinds register on import)
        from .models import CaseReviewCycle

        subject_protect(kind=Snapshot.Kind.CASE_REVIEW, sender=CaseReviewCycle)
