from django.apps import AppConfig


class CaseReviewConfig(AppConfig):
    name = "casereview"
    label = "casereview"
    verbose_name = "Case review (test validity)"

    def ready(self) -> None:
        # case-review reports and IRT fits are evidence snapshots: register their kinds; a review cycle's reports
        # name it by id, so deleting it is refused like a PROTECT
        from evidence.models import Snapshot
        from evidence.registry import kind_register
        from evidence.services import subject_protect

        from .models import CaseReviewCycle
        from .reports import CASE_REVIEW_KIND, IRT_FIT_KIND

        kind_register(CASE_REVIEW_KIND)
        kind_register(IRT_FIT_KIND)
        subject_protect(kind=Snapshot.Kind.CASE_REVIEW, sender=CaseReviewCycle)
