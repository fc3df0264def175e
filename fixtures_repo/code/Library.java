package fixture;

import java.util.List;

/**
 * A library of books.
 */
@Deprecated
public class Library {
    private final List<Book> books;

    public Library(List<Book> books) {
        this.books = books;
    }

    // Counts the books.
    @Override
    public int hashCode() {
        return books.size();
    }

    public <T> T find(String title) {
        Runnable r = new Runnable() {
            public void run() {}
        };
        return null;
    }

    static class Shelf {
        void sort() {}
    }

    interface Lender {
        void lend(Book b);
    }

    enum Genre {
        FICTION,
        SCIENCE;

        String label() {
            return name().toLowerCase();
        }
    }

    record Book(String title, int year) {
        Book {
            if (year < 0) throw new IllegalArgumentException();
        }
    }

    @interface Audited {
        String by();
    }
}
